// GET /api/v1/calls/:id/replay: the script for a stored call, as a shell script download.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson, makeCall, startApi, stream, type ApiHarness, type ErrorBody } from './api-harness.js';

const stdin = Buffer.from([0x7b, 0x00, 0x27, 0x0a, 0xff, 0x7d]);
const call = makeCall({ command: 'DEL', exit: 0, stdin: stream(stdin), env: { CNI_COMMAND: 'DEL', CNI_ARGS: "K8S_POD_NAME=it's", TRACEPARENT: '00-abc-def-01' } });

let h: ApiHarness;

beforeAll(async () => {
  h = await startApi();
  h.write(call);
});

afterAll(async () => {
  await h.close();
});

describe('the replay route', () => {
  it('answers a shell script that re-runs the stored call', async () => {
    const res = await h.app.inject({ method: 'GET', url: `/api/v1/calls/${call.id}/replay` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/x-shellscript; charset=utf-8');
    const script = res.body;
    expect(script.startsWith('#!/bin/sh\n')).toBe(true);
    expect(script).toMatch(/^#\s+command\s+DEL$/m);
    expect(script).toMatch(/^#\s+pod\s+demo\/web-0 \(uid uid-web-0\)$/m);
    expect(script).toContain("WARNING: running this script changes this node's network");
    expect(script).toContain(`'CNI_ARGS=K8S_POD_NAME=it'\\''s'`);
    expect(script).not.toContain('TRACEPARENT');
    expect(script).toMatch(/\n {2}\/opt\/cni\/bin\/bridge\n$/);
    const b64 = /<<'CNIREC_STDIN'\n([\s\S]*?)\nCNIREC_STDIN\n/.exec(script)?.[1] ?? '';
    expect(Buffer.from(b64.replaceAll('\n', ''), 'base64').equals(stdin)).toBe(true);
  });

  it('answers 404 as JSON in the error shape for an unknown id', async () => {
    const res = await getJson<ErrorBody>(h.app, '/api/v1/calls/nope/replay');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });
});

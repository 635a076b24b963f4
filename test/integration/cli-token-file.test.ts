// --token-file and CNIREC_TOKEN_FILE, which every client command takes (the file the daemon reads in its
// pod, so `kubectl exec … -- cnirec …` needs no flag), and `cnirec mcp`'s own command line.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCall } from './api-harness.js';
import { cnirec, serveApi, type ServedApi } from './cli-harness.js';

let api: ServedApi;
let dir: string;
let tokenFile: string;

beforeAll(async () => {
  api = await serveApi({ token: 's3cret-token' });
  api.write(makeCall({ at: 1_000_000 }));
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cnirec-token-'));
  tokenFile = path.join(dir, 'token');
  // As a mounted Secret often is: with a trailing newline.
  fs.writeFileSync(tokenFile, 's3cret-token\n');
});
afterAll(async () => {
  await api?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('the token from a file', () => {
  it('--token-file and CNIREC_TOKEN_FILE authenticate; without a token the daemon refuses', async () => {
    expect((await cnirec(['calls', '--token-file', tokenFile], { api: api.url })).code).toBe(0);
    expect((await cnirec(['calls'], { api: api.url, env: { CNIREC_TOKEN_FILE: tokenFile } })).code).toBe(0);
    const none = await cnirec(['calls'], { api: api.url });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('pass --token or set CNIREC_TOKEN');
  });

  it('--token wins over the file; a missing or empty file is a usage error naming it', async () => {
    expect((await cnirec(['calls', '--token', 'wrong', '--token-file', tokenFile], { api: api.url })).code).toBe(1);
    const missing = await cnirec(['calls', '--token-file', path.join(dir, 'nope')], { api: api.url });
    expect({ code: missing.code, stderr: missing.stderr.trim() }).toEqual({ code: 2, stderr: `cnirec: cannot read --token-file ${path.join(dir, 'nope')}: ENOENT` });
    fs.writeFileSync(path.join(dir, 'empty'), '\n');
    const empty = await cnirec(['calls'], { api: api.url, env: { CNIREC_TOKEN_FILE: path.join(dir, 'empty') } });
    expect({ code: empty.code, stderr: empty.stderr.trim() }).toEqual({ code: 2, stderr: `cnirec: CNIREC_TOKEN_FILE ${path.join(dir, 'empty')} is empty` });
  });
});

describe('cnirec mcp on the command line', () => {
  it('--help prints its usage; an unknown flag is a usage error', async () => {
    const help = await cnirec(['mcp', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: cnirec mcp \[--allow-capture-changes\]/);
    const bad = await cnirec(['mcp', '--allow-capture']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("cnirec: Unknown option '--allow-capture'");
  });

  it('is in cnirec help', async () => {
    expect((await cnirec(['help'])).stdout).toMatch(/^ {2}mcp {10}an MCP server on stdio/m);
  });
});

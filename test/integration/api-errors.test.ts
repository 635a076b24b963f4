// Whatever goes wrong, the client gets one error shape, a 5xx never shows
// its cause (that goes to the log, with the request), and the app lives on.
import { afterEach, describe, expect, it } from 'vitest';
import { StoreError } from '../../store/index.js';
import { getJson, makeCall, startApi, type ApiHarness, type ErrorBody } from './api-harness.js';

let h: ApiHarness | undefined;

afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('unknown routes', () => {
  it.each([
    ['GET', '/nope'],
    ['GET', '/api/v1/call'],
    ['GET', '/api/v2/calls'],
    ['DELETE', '/api/v1/calls'],
    ['POST', '/api/v1/tracer/mode'],
  ] as const)('%s %s answers 404 in the error shape', async (method, url) => {
    h = await startApi();
    const res = await h.app.inject({ method, url: `${url}?x=1` });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: { code: 'not_found', message: `No route ${method} ${url}; the routes are listed at /api/v1/openapi.json.` } });
  });
});

describe('a failing store', () => {
  const secret = 'SQLITE_CORRUPT at /var/lib/cnirec/calls.db page 7';

  it('gives the client a generic 500 without the cause or a stack, and logs the cause with the request', async () => {
    h = await startApi({
      wrapStore: (store) => ({
        ...store,
        listCalls: () => {
          throw new Error(secret);
        },
      }),
    });
    const res = await h.app.inject({ method: 'GET', url: '/api/v1/calls?namespace=demo' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: { code: 'internal_error', message: 'The daemon failed to answer this request; the details are in its log.' } });
    expect(res.body).not.toContain('SQLITE');
    expect(res.body).not.toContain('at ');

    const logged = h.logLines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'request failed');
    expect(logged).toMatchObject({ level: 50, err: { message: secret }, request: { method: 'GET', url: '/api/v1/calls?namespace=demo', route: '/api/v1/calls' } });
  });

  it('keeps serving after a failure', async () => {
    let broken = true;
    h = await startApi({
      wrapStore: (store) => ({
        ...store,
        getCall: (id) => {
          if (broken) throw new Error(secret);
          return store.getCall(id);
        },
      }),
    });
    const call = makeCall();
    h.write(call);
    expect((await getJson(h.app, `/api/v1/calls/${call.id}`)).status).toBe(500);
    broken = false;
    expect((await getJson(h.app, `/api/v1/calls/${call.id}`)).status).toBe(200);
  });

  it('answers 503 with Retry-After while the database is locked', async () => {
    h = await startApi({
      wrapStore: (store) => ({
        ...store,
        podCallGraph: () => {
          throw new StoreError('busy', '/var/lib/cnirec/calls.db', 'The database is locked by another process');
        },
      }),
    });
    const res = await getJson<ErrorBody>(h.app, '/api/v1/pods/demo/web-0');
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('store_unavailable');
    expect(JSON.stringify(res.body)).not.toContain('/var/lib');
  });
});

describe('bad path parameters', () => {
  it('are refused naming the parameter', async () => {
    h = await startApi();
    const res = await getJson<ErrorBody>(h.app, `/api/v1/calls/${'x'.repeat(200)}`);
    expect(res.status).toBe(400);
    expect(res.body.error.issues?.map((i) => i.path)).toEqual(['id']);
    const pod = await getJson<ErrorBody>(h.app, `/api/v1/pods/demo/${'p'.repeat(254)}`);
    expect(pod.status).toBe(400);
    expect(pod.body.error.issues?.map((i) => i.path)).toEqual(['name']);
  });

  it('accept a pod name of the longest length Kubernetes allows', async () => {
    h = await startApi();
    const name = 'p'.repeat(253);
    h.write(makeCall({ podName: name }));
    expect((await getJson(h.app, `/api/v1/pods/demo/${name}`)).status).toBe(200);
  });

  it('too long for the router are refused in the error shape', async () => {
    h = await startApi();
    const res = await getJson<ErrorBody>(h.app, `/api/v1/calls/${'x'.repeat(2000)}`);
    expect(res.status).toBe(414);
    expect(res.body.error.code).toBe('uri_too_long');
  });

  it('with broken percent-encoding are refused in the error shape', async () => {
    h = await startApi();
    const res = await getJson<ErrorBody>(h.app, '/api/v1/pods/demo/%E0%A4%A');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('bad_request');
  });
});

// With a token, every route but /healthz wants "Authorization: Bearer <token>";
// without one, everything is open (the daemon then listens on loopback only).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCall, startApi, type ApiHarness, type ErrorBody } from './api-harness.js';

const TOKEN = 'k8s-secret-token-0123456789';
const call = makeCall();

describe('a daemon with a token', () => {
  let h: ApiHarness;

  beforeAll(async () => {
    h = await startApi({ token: TOKEN });
    h.write(call);
  });

  afterAll(async () => {
    await h.close();
  });

  const get = (url: string, authorization?: string) => h.app.inject({ method: 'GET', url, headers: authorization === undefined ? {} : { authorization } });

  const ROUTES = ['/api/v1/calls', `/api/v1/calls/${call.id}`, `/api/v1/calls/${call.id}/replay`, '/api/v1/pods/demo/web-0', '/api/v1/tracer', '/api/v1/openapi.json', '/api/v1/docs', '/metrics'];

  it.each(ROUTES)('refuses %s without a token: 401 in the error shape, with WWW-Authenticate', async (url) => {
    const res = await get(url);
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="cnirec"');
    expect(res.json<ErrorBody>()).toEqual({ error: { code: 'unauthorized', message: expect.stringContaining('Authorization: Bearer') } });
  });

  it.each([`Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, 'Bearer ', `Basic ${Buffer.from(`user:${TOKEN}`).toString('base64')}`, TOKEN])(
    'refuses the header %j',
    async (authorization) => {
      expect((await get('/api/v1/calls', authorization)).statusCode).toBe(401);
    },
  );

  it.each(ROUTES)('answers %s with the token', async (url) => {
    expect((await get(url, `Bearer ${TOKEN}`)).statusCode).toBe(200);
  });

  it('refuses a mode switch without the token, before reading the body', async () => {
    const res = await h.app.inject({ method: 'PUT', url: '/api/v1/tracer/mode', payload: { mode: 'light' } });
    expect(res.statusCode).toBe(401);
    expect(h.modeSwitches).toEqual([]);
  });

  it('leaves /healthz open', async () => {
    expect((await get('/healthz')).statusCode).toBe(200);
  });

  it('answers 401, not 404, for unknown routes without the token, so routes cannot be probed', async () => {
    expect((await get('/api/v1/secret-admin')).statusCode).toBe(401);
    expect((await get('/api/v1/secret-admin', `Bearer ${TOKEN}`)).statusCode).toBe(404);
  });

  it('never writes the token to the log', async () => {
    await get('/api/v1/calls?limit=0', `Bearer ${TOKEN}`);
    await get('/api/v1/calls', `Bearer wrong-${TOKEN}`);
    expect(h.logLines.length).toBeGreaterThan(0);
    expect(h.logLines.join('\n')).not.toContain(TOKEN);
  });
});

describe('a daemon without a token', () => {
  it.each([null, ''])('answers every route without a header (token %j)', async (token) => {
    const h = await startApi({ token });
    try {
      for (const url of ['/api/v1/calls', '/api/v1/tracer', '/api/v1/openapi.json', '/healthz']) {
        expect((await h.app.inject({ method: 'GET', url })).statusCode, url).toBe(200);
      }
    } finally {
      await h.close();
    }
  });
});

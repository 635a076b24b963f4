// The web view's files: served under /ui/ (deep links answer the page), / redirecting there, each answer
// under a strict Content-Security-Policy; open without a token (they hold no data) while the data stays
// behind it, and the tail taking the token as a websocket subprotocol, never from the URL.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { makeCall, startApi, type ApiHarness } from './api-harness.js';

const TOKEN = 'ui-token-with/+=chars-0123';
const INDEX = '<!doctype html><title>cnirec</title><script type="module" src="/ui/assets/app-ABCD1234.js"></script>';

function fakeUiDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cnirec-ui-'));
  fs.mkdirSync(path.join(dir, 'assets'));
  fs.writeFileSync(path.join(dir, 'index.html'), INDEX);
  fs.writeFileSync(path.join(dir, 'assets', 'app-ABCD1234.js'), 'console.log("app")');
  return dir;
}

function expectSecurityHeaders(headers: Record<string, unknown>): void {
  const csp = String(headers['content-security-policy']);
  expect(csp).toContain("default-src 'self'");
  expect(csp).toContain("script-src 'self'");
  expect(csp).toContain("style-src 'self'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
  expect(headers['x-content-type-options']).toBe('nosniff');
}

describe('the web view behind a token', () => {
  let h: ApiHarness;
  let dir: string;
  let base: string;
  const call = makeCall();

  beforeAll(async () => {
    dir = fakeUiDir();
    h = await startApi({ token: TOKEN, uiDir: dir });
    h.write(call);
    base = await h.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await h.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('redirects / to /ui/', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/ui/');
    expectSecurityHeaders(res.headers);
  });

  it.each(['/ui/', '/ui/tail?namespace=demo', '/ui/pods/demo/web-0', `/ui/calls/${call.id}`])('answers %s with the page, without a token, under the policy', async (url) => {
    const res = await h.app.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toBe(INDEX);
    expectSecurityHeaders(res.headers);
  });

  it('serves a hashed asset for good, and a missing one as a 404 (not the page)', async () => {
    const asset = await h.app.inject({ method: 'GET', url: '/ui/assets/app-ABCD1234.js' });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['content-type']).toContain('javascript');
    expect(asset.headers['cache-control']).toContain('immutable');
    expectSecurityHeaders(asset.headers);
    const missing = await h.app.inject({ method: 'GET', url: '/ui/assets/app-OLD00000.js' });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['content-type']).not.toContain('html');
  });

  it('keeps the data behind the token', async () => {
    expect((await h.app.inject({ method: 'GET', url: '/api/v1/calls' })).statusCode).toBe(401);
    expect((await h.app.inject({ method: 'GET', url: '/api/v1/calls', headers: { authorization: `Bearer ${TOKEN}` } })).statusCode).toBe(200);
  });

  const tailUrl = () => `${base.replace('http', 'ws')}/api/v1/tail`;
  const tokenProtocol = (token: string) => `cnirec.token.${Buffer.from(token).toString('base64url')}`;

  it('lets the tail in with the token as a subprotocol, selecting cnirec.v1 (the token is never echoed)', async () => {
    const socket = new WebSocket(tailUrl(), ['cnirec.v1', tokenProtocol(TOKEN)]);
    const hello = await new Promise<{ type: string }>((resolve, reject) => {
      socket.once('message', (data) => resolve(JSON.parse(String(data)) as { type: string }));
      socket.once('error', reject);
    });
    expect(hello.type).toBe('hello');
    expect(socket.protocol).toBe('cnirec.v1');
    socket.close();
  });

  it.each([['a wrong token', ['cnirec.v1', tokenProtocol(`${TOKEN}x`)]], ['no token', ['cnirec.v1']], ['the token as the only protocol', [tokenProtocol('nope')]]])(
    'refuses the tail with %s (401 at the handshake)',
    async (_name, protocols) => {
      const socket = new WebSocket(tailUrl(), protocols);
      socket.on('error', () => {}); // the refused handshake also errors: the status is what is checked
      const status = await new Promise<number>((resolve) => {
        socket.once('unexpected-response', (req, res) => {
          resolve(res.statusCode ?? 0);
          req.destroy(); // with this listener set, ws leaves closing the refused request to us
        });
        socket.once('open', () => resolve(101));
      });
      expect(status).toBe(401);
    },
  );

  it('never takes the token from the URL', async () => {
    const res = await h.app.inject({ method: 'GET', url: `/api/v1/calls?token=${TOKEN}` });
    expect(res.statusCode).toBe(401);
  });
});

describe('a daemon whose web view was not built', () => {
  it('says how to build it', async () => {
    const h = await startApi({ uiDir: null });
    try {
      const res = await h.app.inject({ method: 'GET', url: '/ui/pods/demo/web-0' });
      expect(res.statusCode).toBe(404);
      expect(res.body).toContain('npm run build');
      expectSecurityHeaders(res.headers);
    } finally {
      await h.close();
    }
  });
});

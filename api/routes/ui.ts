/**
 * The web view: the files `npm run build` bundles into dist/ui/ (sources in
 * ui/), served under /ui/ with / redirecting there. Every path under /ui/
 * that is not a file answers index.html, so a page's URL can be shared and
 * reloaded (the browser's router reads it).
 *
 * The files hold no data and are served without a token (the page has to
 * load to ask for one); the data routes it calls stay behind auth. Every
 * answer here carries a strict Content-Security-Policy: recorded text is
 * attacker-controlled, so no inline script or style and no eval may run,
 * and the page may talk only to this daemon.
 */

import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { UiDeps } from '../deps.js';

export const UI_PREFIX = '/ui/';

/** The policy of every web view answer; `connect-src 'self'` covers the tail's ws(s) in current browsers, the explicit schemes older ones. */
export const UI_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self' ws: wss:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

/** Whether a route belongs to the web view's files (served without a token). */
export function isUiRoute(url: string): boolean {
  return url === '/' || url === '/ui' || url.startsWith(UI_PREFIX);
}

const NOT_BUILT = 'The web view is not built: run `npm run build` (it writes dist/ui/), then restart the daemon.';

export async function registerUi(app: FastifyInstance, deps: UiDeps): Promise<void> {
  const dir = deps.uiDir ?? null;
  const built = dir !== null && existsSync(path.join(dir, 'index.html'));

  await app.register(async (scope) => {
    scope.addHook('onSend', async (_request, reply, payload) => {
      reply.headers(UI_SECURITY_HEADERS);
      return payload;
    });
    scope.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect(UI_PREFIX, 302));
    scope.get('/ui', { schema: { hide: true } }, async (_request, reply) => reply.redirect(UI_PREFIX, 302));

    if (!built) {
      scope.get(`${UI_PREFIX}*`, { schema: { hide: true } }, async (_request, reply) => reply.code(404).type('text/plain; charset=utf-8').send(NOT_BUILT));
      return;
    }
    // wildcard: false gives each file its own route, found at start; the wildcard below is then the SPA fallback.
    await scope.register(fastifyStatic, {
      root: dir,
      prefix: UI_PREFIX,
      wildcard: false,
      index: false,
      decorateReply: true,
      cacheControl: false,
      setHeaders: (reply, filePath) => {
        // Hashed asset names never change content: cache them for good; index.html always revalidates.
        reply.header('cache-control', /-[A-Z0-9]{8}\.(js|css)$/.test(filePath) ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
    });
    const sendIndex = async (_request: FastifyRequest, reply: FastifyReply) => reply.header('cache-control', 'no-cache').sendFile('index.html');
    scope.get(UI_PREFIX, { schema: { hide: true } }, sendIndex);
    // A missing asset is a 404, not the page: a stale tab asking for an old bundle must not get HTML as script.
    scope.get(`${UI_PREFIX}assets/*`, { schema: { hide: true } }, async (_request, reply) => reply.code(404).type('text/plain; charset=utf-8').send('No such asset: reload the page.'));
    scope.get(`${UI_PREFIX}*`, { schema: { hide: true } }, sendIndex);
  });
}

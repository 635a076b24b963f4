/**
 * Bearer-token auth for every route but /healthz (probes and load balancers
 * must reach it without a secret) and the web view's static files. The comparison runs over SHA-256 digests
 * with timingSafeEqual: equal lengths whatever the client sends, so neither
 * the token's bytes nor its length leak through response timing. The token
 * itself is never logged, and neither is the header that carries it.
 */

import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { apiErrors } from './errors.js';
import { isUiRoute } from './routes/ui.js';

/** Routes anyone may call even when a token is set: the probe, and the web view's files (no data; the page asks for the token). */
const isOpenRoute = (url: string) => url === '/healthz' || isUiRoute(url);

/**
 * A browser cannot set headers on a websocket, and a token in the URL ends up
 * in logs and history; so the web view offers it as a websocket subprotocol:
 * `Sec-WebSocket-Protocol: cnirec.v1, cnirec.token.<base64url of the token>`.
 * The tail selects `cnirec.v1` (never echoing the token).
 */
export const WS_PROTOCOL = 'cnirec.v1';
const WS_TOKEN_PREFIX = 'cnirec.token.';

/** The token carried in a Sec-WebSocket-Protocol header, or null. */
export function websocketProtocolToken(header: string | undefined): string | null {
  for (const part of header?.split(',') ?? []) {
    const protocol = part.trim();
    if (!protocol.startsWith(WS_TOKEN_PREFIX)) continue;
    const encoded = protocol.slice(WS_TOKEN_PREFIX.length);
    if (!/^[A-Za-z0-9_-]+$/.test(encoded)) return null;
    const token = Buffer.from(encoded, 'base64url').toString('utf8');
    return token.length > 0 ? token : null;
  }
  return null;
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** The token in `Authorization: Bearer <token>` (scheme case-insensitive, RFC 7235), or null. */
export function bearerToken(header: string | undefined): string | null {
  const match = header === undefined ? null : /^Bearer[ \t]+(.*?)[ \t]*$/i.exec(header);
  return match?.[1] ? match[1] : null;
}

const isUpgrade = (request: FastifyRequest) => request.headers.upgrade?.toLowerCase() === 'websocket';

/** Checks a presented token against the expected one in constant time. */
export function createTokenCheck(expected: string): (presented: string | null) => boolean {
  const expectedDigest = digest(expected);
  return (presented) => {
    // Digest even a missing token, so "no header" and "wrong token" take the same time.
    const presentedDigest = digest(presented ?? '');
    return timingSafeEqual(presentedDigest, expectedDigest) && presented !== null;
  };
}

/** Auth is on when the daemon was given a token; an empty string counts as none. */
export function authEnabled(token: string | null | undefined): token is string {
  return typeof token === 'string' && token.length > 0;
}

/**
 * Adds the check as an onRequest hook on the root instance, so it runs
 * before routing for everything registered later, unknown routes included
 * (an unauthenticated client cannot probe which routes exist). Does nothing
 * when `token` is null or empty: the daemon then listens on loopback only.
 */
export function registerAuth(app: FastifyInstance, token: string | null | undefined): void {
  if (!authEnabled(token)) return;
  const check = createTokenCheck(token);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    if (request.routeOptions.url !== undefined && isOpenRoute(request.routeOptions.url)) return;
    const presented = bearerToken(request.headers.authorization) ?? (isUpgrade(request) ? websocketProtocolToken(request.headers['sec-websocket-protocol']) : null);
    if (!check(presented)) throw apiErrors.unauthorized();
  });
  // A refused websocket handshake is answered before the websocket plugin's own hooks run, so nothing
  // else would close its socket: close it once the 401 is written (a browser would keep it open).
  app.addHook('onResponse', async (request, reply) => {
    if (isUpgrade(request) && reply.statusCode === 401) request.raw.socket?.destroy();
  });
}

/**
 * Bearer-token auth for every route but /healthz (probes and load balancers
 * must reach it without a secret). The comparison runs over SHA-256 digests
 * with timingSafeEqual: equal lengths whatever the client sends, so neither
 * the token's bytes nor its length leak through response timing. The token
 * itself is never logged, and neither is the header that carries it.
 */

import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { apiErrors } from './errors.js';

/** Routes anyone may call even when a token is set. */
const OPEN_ROUTES = new Set(['/healthz']);

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** The token in `Authorization: Bearer <token>` (scheme case-insensitive, RFC 7235), or null. */
export function bearerToken(header: string | undefined): string | null {
  const match = header === undefined ? null : /^Bearer[ \t]+(.*?)[ \t]*$/i.exec(header);
  return match?.[1] ? match[1] : null;
}

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
    if (request.routeOptions.url !== undefined && OPEN_ROUTES.has(request.routeOptions.url)) return;
    if (!check(bearerToken(request.headers.authorization))) throw apiErrors.unauthorized();
  });
}

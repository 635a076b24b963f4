/**
 * Closes the socket of a websocket upgrade answered with plain HTTP (a 401
 * from the auth hook, a 404, a 426).
 *
 * Node hands an upgrade request's socket over to the 'upgrade' listener and
 * stops tracking it: the HTTP server neither reuses nor closes it, and
 * `server.close()` waits for it to end. @fastify/websocket destroys it after a
 * refused upgrade only when its own onRequest hook ran, which the root auth
 * hook prevents by answering first. Left open, one refused upgrade made the
 * daemon's shutdown wait until the client went away.
 */

import type { FastifyInstance } from 'fastify';

export function closeRefusedUpgrades(app: FastifyInstance): void {
  app.addHook('onResponse', async (request, reply) => {
    if (reply.statusCode === 101 || request.headers.upgrade === undefined) return;
    const socket = request.raw.socket;
    // After the response is written: end() flushes it, then the socket goes.
    if (!socket.destroyed) socket.end(() => socket.destroy());
    // A client that never reads must not hold it open either.
    setTimeout(() => socket.destroy(), 1000).unref();
  });
}

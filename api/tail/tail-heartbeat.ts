/**
 * Drops peers that vanished without closing (a laptop lid, a NAT timeout):
 * a websocket ping every interval, and a peer that has not answered the
 * previous one by the next tick is terminated. Without it their outboxes
 * would sit full until TCP itself gave up, which can take many minutes.
 */

import type { WebSocket } from 'ws';

export const DEFAULT_HEARTBEAT_MS = 30_000;

/** Returns the function that stops the heartbeat (also stopped by the socket's close). */
export function keepAlive(socket: WebSocket, intervalMs: number): () => void {
  let answered = true;
  const onPong = () => {
    answered = true;
  };
  socket.on('pong', onPong);
  const timer = setInterval(() => {
    if (!answered) {
      socket.terminate();
      return;
    }
    answered = false;
    socket.ping();
  }, intervalMs);
  // The daemon's exit must not wait for a heartbeat.
  timer.unref();
  const stop = () => {
    clearInterval(timer);
    socket.off('pong', onPong);
  };
  socket.once('close', stop);
  return stop;
}

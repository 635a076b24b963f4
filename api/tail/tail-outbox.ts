/**
 * One client's outgoing messages. Writes go straight to the socket while its
 * buffer is small; beyond that they wait in a bounded queue that is pumped
 * as earlier writes complete. A client that lets the queue (plus what the
 * socket still holds) outgrow the limits is not worth slowing anyone else
 * for: the outbox gives up, drops what it held and reports how much.
 *
 * Nothing here ever blocks or throws at the caller (the hub, inside the
 * collector's publish): `send` only appends or writes asynchronously.
 */

import { WebSocket } from 'ws';

export interface OutboxLimits {
  /** Messages waiting in the queue (not yet handed to the socket). */
  readonly maxMessages: number;
  /** Bytes waiting in the queue plus the socket's own unsent bytes. */
  readonly maxBytes: number;
  /** Hand messages to the socket only while it holds less than this: above it, queue. */
  readonly highWaterBytes: number;
}

export const DEFAULT_OUTBOX_LIMITS: OutboxLimits = {
  maxMessages: 1_000,
  maxBytes: 8 * 1024 * 1024,
  highWaterBytes: 512 * 1024,
};

export interface Outbox {
  /** Queues or writes one encoded message; false once the outbox has given up or been closed. */
  send(frame: Buffer): boolean;
  /** Nothing queued: the next `send` goes straight to the socket. */
  readonly idle: boolean;
  /** Resolves once the queue is empty (or the outbox is closed): lets bulk senders (the replay) pace themselves. */
  whenIdle(): Promise<void>;
  /** Stops sending and forgets the queue; returns how many queued messages were never sent. */
  close(): number;
}

/** `onOverflow(dropped)` is called once, when the limits are exceeded; the outbox is closed by then. */
export function createOutbox(socket: WebSocket, limits: OutboxLimits, onOverflow: (dropped: number) => void): Outbox {
  let queue: Buffer[] = [];
  let queuedBytes = 0;
  let closed = false;
  let idleWaiters: Array<() => void> = [];

  const wakeIdleWaiters = () => {
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const wake of waiters) wake();
  };

  const write = (frame: Buffer) => {
    // The callback runs once the socket has taken the bytes: the moment its buffer may have room again.
    socket.send(frame, { binary: false }, afterWrite);
  };

  const pump = () => {
    if (closed) return;
    while (queue.length > 0 && socket.readyState === WebSocket.OPEN && socket.bufferedAmount < limits.highWaterBytes) {
      const frame = queue.shift() as Buffer;
      queuedBytes -= frame.length;
      write(frame);
    }
    if (queue.length === 0) wakeIdleWaiters();
  };

  // Errors (the peer went away) surface as the socket's close event; the session cleans up there.
  const afterWrite = (err?: Error) => {
    if (err === undefined || err === null) pump();
  };

  const close = (): number => {
    const unsent = queue.length;
    closed = true;
    queue = [];
    queuedBytes = 0;
    wakeIdleWaiters();
    return unsent;
  };

  return {
    send(frame) {
      if (closed || socket.readyState !== WebSocket.OPEN) return false;
      if (queue.length === 0 && socket.bufferedAmount < limits.highWaterBytes) {
        write(frame);
        return true;
      }
      if (queue.length + 1 > limits.maxMessages || queuedBytes + frame.length + socket.bufferedAmount > limits.maxBytes) {
        onOverflow(close() + 1);
        return false;
      }
      queue.push(frame);
      queuedBytes += frame.length;
      return true;
    },
    get idle() {
      return queue.length === 0;
    },
    whenIdle() {
      if (closed || queue.length === 0) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    close,
  };
}

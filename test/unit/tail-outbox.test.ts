// A client's outbox against a stand-in socket whose buffer the test fills
// and drains: writes go straight through while there is room, queue when
// there is not, and overflow closes the outbox once.
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createOutbox, type OutboxLimits } from '../../api/tail/tail-outbox.js';

class FakeSocket {
  readyState: number = WebSocket.OPEN;
  bufferedAmount = 0;
  readonly written: string[] = [];
  private callbacks: Array<(err?: Error) => void> = [];

  send(data: Buffer, _options: unknown, cb: (err?: Error) => void): void {
    this.written.push(data.toString());
    this.bufferedAmount += data.length;
    this.callbacks.push(cb);
  }

  /** The network took everything written so far. */
  drain(): void {
    this.bufferedAmount = 0;
    const callbacks = this.callbacks;
    this.callbacks = [];
    for (const cb of callbacks) cb();
  }
}

const limits: OutboxLimits = { maxMessages: 3, maxBytes: 100, highWaterBytes: 10 };
const frame = (text: string) => Buffer.from(text);

function setup(l = limits) {
  const socket = new FakeSocket();
  const overflows: number[] = [];
  const outbox = createOutbox(socket as unknown as WebSocket, l, (n) => overflows.push(n));
  return { socket, outbox, overflows };
}

describe('an outbox', () => {
  it('writes straight to the socket while its buffer is below the high-water mark', () => {
    const { socket, outbox } = setup();
    expect(outbox.send(frame('a'))).toBe(true);
    expect(outbox.send(frame('b'))).toBe(true);
    expect(socket.written).toEqual(['a', 'b']);
    expect(outbox.idle).toBe(true);
  });

  it('queues above the high-water mark and sends the queue in order as the socket drains', () => {
    const { socket, outbox } = setup();
    outbox.send(frame('0123456789'));
    outbox.send(frame('x'));
    outbox.send(frame('y'));
    expect(socket.written).toEqual(['0123456789']);
    expect(outbox.idle).toBe(false);
    socket.drain();
    expect(socket.written).toEqual(['0123456789', 'x', 'y']);
    expect(outbox.idle).toBe(true);
  });

  it('gives up once more messages wait than allowed, counting the one that did not fit', () => {
    const { outbox, overflows } = setup();
    outbox.send(frame('0123456789'));
    for (const m of ['a', 'b', 'c']) expect(outbox.send(frame(m))).toBe(true);
    expect(outbox.send(frame('d'))).toBe(false);
    expect(overflows).toEqual([4]);
    expect(outbox.send(frame('e'))).toBe(false);
    expect(overflows).toEqual([4]);
  });

  it('gives up once queued bytes and the socket’s unsent bytes exceed the byte limit', () => {
    const { socket, outbox, overflows } = setup({ maxMessages: 100, maxBytes: 30, highWaterBytes: 10 });
    outbox.send(frame('x'.repeat(15)));
    outbox.send(frame('y'.repeat(10)));
    expect(overflows).toEqual([]);
    outbox.send(frame('z'.repeat(10)));
    expect(overflows).toEqual([2]);
    socket.drain();
    expect(socket.written).toEqual(['x'.repeat(15)]);
  });

  it('tells a bulk sender when the queue has emptied', async () => {
    const { socket, outbox } = setup();
    outbox.send(frame('0123456789'));
    outbox.send(frame('q'));
    let idle = false;
    const waiting = outbox.whenIdle().then(() => (idle = true));
    await Promise.resolve();
    expect(idle).toBe(false);
    socket.drain();
    await waiting;
    expect(idle).toBe(true);
  });

  it('sends nothing more once closed, and reports what it never sent', () => {
    const { socket, outbox } = setup();
    outbox.send(frame('0123456789'));
    outbox.send(frame('q'));
    expect(outbox.close()).toBe(1);
    socket.drain();
    expect(outbox.send(frame('r'))).toBe(false);
    expect(socket.written).toEqual(['0123456789']);
  });

  it('does not write to a socket that is no longer open', () => {
    const { socket, outbox } = setup();
    socket.readyState = WebSocket.CLOSING;
    expect(outbox.send(frame('a'))).toBe(false);
    expect(socket.written).toEqual([]);
  });
});

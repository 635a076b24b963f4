// A client that stops reading must cost the others nothing: it is closed
// with 1013 once its queue overflows, while a client that reads gets every
// message and the collector's publish stays quick.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readTailStats } from '../../api/tail/tail-stats.js';
import { finished, makeCall, started, startTestApp, TailClient, type TestApp } from './tail-harness.js';

let t: TestApp;

beforeEach(async () => {
  // Small limits so the slow client overflows after a few MB instead of tens.
  t = await startTestApp({ tail: { outbox: { maxMessages: 200, maxBytes: 1024 * 1024, highWaterBytes: 64 * 1024 } } });
});

afterEach(async () => {
  await t.close();
});

/** Long paths, so the socket buffers fill after hundreds of messages, not tens of thousands. */
const LONG_PATH = `/opt/cni/bin/${'x'.repeat(8 * 1024)}`;

function bigBatch(n: number) {
  return Array.from({ length: n }, () => makeCall({ path: LONG_PATH })).flatMap((c) => [started(c), finished(c)]);
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;
}

describe('a client that stops reading', () => {
  it('is closed with 1013 and a reason counting the dropped messages, while a reading client gets everything', async () => {
    const fast = await TailClient.connect(t.wsBase);
    const slow = await TailClient.connect(t.wsBase);
    await fast.waitFor((m) => m.type === 'hello');
    await slow.waitFor((m) => m.type === 'hello');
    slow.rawSocket?.pause();

    let sent = 0;
    // Bounded: kernel buffers on loopback hold a few MB, the outbox 1 MiB more.
    for (let batch = 0; batch < 400 && (readTailStats(t.app)?.droppedClients ?? 0) === 0; batch++) {
      const events = bigBatch(25);
      t.collector.emit(...events);
      sent += events.length / 2;
      // Let the fast client read and the sockets drain, as between real collector flushes.
      await new Promise((resolve) => setImmediate(resolve));
    }
    const stats = readTailStats(t.app);
    expect(stats?.droppedClients).toBe(1);
    expect(stats?.clients).toBe(1);

    await fast.waitForCount('call.finished', sent, 20_000);
    expect(fast.ofType('call.started')).toHaveLength(sent);

    // Once it reads again, the slow client finds what was sent before the drop, then the close.
    slow.rawSocket?.resume();
    const closed = await slow.closed;
    expect(closed.code).toBe(1013);
    const dropped = Number(/^too slow: (\d+) messages dropped$/.exec(closed.reason)?.[1]);
    expect(dropped).toBeGreaterThan(0);
    expect(stats?.droppedMessages).toBe(dropped);
    fast.close();
  });

  it('never makes the collector’s publish wait', async () => {
    const fast = await TailClient.connect(t.wsBase);
    const slow = await TailClient.connect(t.wsBase);
    await slow.waitFor((m) => m.type === 'hello');
    slow.rawSocket?.pause();

    // Only while the slow client is stuck, and still connected, does its socket matter.
    for (let batch = 0; batch < 400 && (readTailStats(t.app)?.droppedClients ?? 0) === 0; batch++) {
      t.collector.emit(...bigBatch(10));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(readTailStats(t.app)?.droppedClients).toBe(1);
    const times = t.collector.onEventsMs;
    expect(times.length).toBeGreaterThan(20);
    // 20 events of 8 KiB to two clients take a millisecond or two; the percentile
    // ignores the odd GC pause, which no subscriber can avoid.
    expect(percentile(times, 0.9)).toBeLessThan(50);
    fast.close();
    slow.rawSocket?.resume();
    slow.close();
  });
});

// `?since=`: a client catches up from the store, then goes live, and sees
// every call exactly once across the handoff, including calls that arrive
// while the replay is being read.
import { describe, expect, it } from 'vitest';
import type { CniCall, CollectorEvent } from '../../collector/types.js';
import { finished, makeCall, started, T0, tailTestKit, updated, type TailClient, type TestApp } from './tail-harness.js';

const tail = tailTestKit();
const start = tail.start;
/** Connects and waits for the replay to end. */
const catchUp = (query: string) => tail.connect(query, 'replay.done');

const isoUs = (us: number) => new Date(us / 1000).toISOString();
const log = (...entries: Array<[CollectorEvent['type'] | 'replay.done', CniCall | null]>) =>
  entries.map(([type, call]) => (call ? `${type} ${call.id}` : type));

/** The client's call messages with the replay.done marker where it arrived. */
function received(client: TailClient): string[] {
  return client.messages.filter((m) => m.call !== undefined || m.type === 'replay.done').map((m) => (m.call ? `${m.type} ${m.call.id}` : m.type));
}

describe('a client connecting with ?since=', () => {
  it('first gets the stored calls since then, oldest first, then replay.done, then live calls', async () => {
    const app = await start();
    const before = makeCall({ at: 0 });
    const first = makeCall({ at: 60_000_000, exit: 1 });
    const second = makeCall({ at: 61_000_000 });
    const running = makeCall({ at: 62_000_000 });
    app.store.writeEvents([finished(before), finished(first), finished(second), started(running)]);

    const client = await catchUp(`?since=${encodeURIComponent(isoUs(T0 + 30_000_000))}`);
    expect(client.messages[0]).toMatchObject({ type: 'hello', replay: { since: isoUs(T0 + 30_000_000), limit: 10_000 } });
    expect(client.ofType('replay.done')).toEqual([{ type: 'replay.done', calls: 3, capped: false }]);
    const replayedFirst = client.messages.find((m) => m.call?.id === first.id);
    expect(replayedFirst?.call).toMatchObject({ exitCode: 1, ok: false, durationMs: 42, status: 'finished' });

    // Live from here: the running call ends, a new one starts.
    const next = makeCall({ at: 63_000_000 });
    app.collector.emit(finished(running), started(next));
    await client.waitFor((m) => m.type === 'call.started' && m.call?.id === next.id);
    expect(received(client)).toEqual(
      log(
        ['call.finished', first],
        ['call.finished', second],
        ['call.started', running],
        ['replay.done', null],
        ['call.finished', running],
        ['call.started', next],
      ),
    );
  });

  it('accepts epoch milliseconds and applies its filter to the replay, VERSION probes hidden', async () => {
    const app = await start();
    const web0 = makeCall({ at: 10_000_000, podName: 'web-0' });
    const web1 = makeCall({ at: 11_000_000, podName: 'web-1' });
    const probe = makeCall({ at: 12_000_000, podName: 'web-1', command: 'VERSION' });
    app.store.writeEvents([finished(web0), finished(web1), finished(probe)]);

    const client = await catchUp(`?since=${Math.floor(T0 / 1000)}&pod=web-1`);
    expect(received(client)).toEqual(log(['call.finished', web1], ['replay.done', null]));
  });

  it('sees each call once when calls start and finish while the store is read and the store already has them', async () => {
    const stored = makeCall({ at: 1_000_000 });
    const ending = makeCall({ at: 2_000_000 });
    const fresh = makeCall({ at: 3_000_000 });
    let arrived = false;
    // The hook only runs once a client connects, by which time `app` is set.
    const app: TestApp = await start({
      // As in the daemon, where the store's listener writes the same events the tail holds back.
      beforeListCalls: () => {
        if (arrived) return;
        arrived = true;
        const events = [finished(ending), started(fresh)];
        app.collector.emit(...events);
        app.store.writeEvents(events);
      },
    });
    app.store.writeEvents([finished(stored), started(ending)]);

    const client = await catchUp(`?since=${Math.floor(T0 / 1000)}`);
    app.collector.emit(finished(fresh));
    await client.waitFor((m) => m.type === 'call.finished' && m.call?.id === fresh.id);
    expect(received(client)).toEqual(
      log(['call.finished', stored], ['call.finished', ending], ['call.started', fresh], ['replay.done', null], ['call.finished', fresh]),
    );
  });

  it('gets an update that arrives while the store is read after the replay, even of a call the replay sent finished', async () => {
    const ended = makeCall({ at: 1_000_000 });
    let arrived = false;
    const app: TestApp = await start({
      beforeListCalls: () => {
        if (arrived) return;
        arrived = true;
        const events = [updated(ended)];
        app.collector.emit(...events);
        app.store.writeEvents(events);
      },
    });
    app.store.writeEvents([finished(ended)]);
    const client = await catchUp(`?since=${Math.floor(T0 / 1000)}`);
    await client.waitFor((m) => m.type === 'call.updated');
    expect(received(client)).toEqual(log(['call.finished', ended], ['replay.done', null], ['call.updated', ended]));
  });

  it('sees each call once when calls arrive while the store is read but are not written yet', async () => {
    const ending = makeCall({ at: 2_000_000 });
    const fresh = makeCall({ at: 3_000_000 });
    let arrived = false;
    // The hook only runs once a client connects, by which time `app` is set.
    const app: TestApp = await start({
      beforeListCalls: () => {
        if (arrived) return;
        arrived = true;
        app.collector.emit(finished(ending), started(fresh));
      },
    });
    app.store.writeEvents([started(ending)]);

    const client = await catchUp(`?since=${Math.floor(T0 / 1000)}`);
    await client.waitFor((m) => m.call?.id === fresh.id);
    expect(received(client)).toEqual(log(['call.started', ending], ['replay.done', null], ['call.finished', ending], ['call.started', fresh]));
  });

  it('pages through more calls than one store page holds without a gap or a repeat', async () => {
    const app = await start();
    const calls = Array.from({ length: 2_345 }, (_, i) => makeCall({ at: i * 1_000, command: i % 2 === 0 ? 'ADD' : 'DEL' }));
    app.store.writeEvents(calls.map(finished));
    const client = await catchUp(`?since=${Math.floor(T0 / 1000)}`);
    expect(client.ofType('call.finished').map((m) => m.call?.id)).toEqual(calls.map((c) => c.id));
  });

  it('stops at the replay cap, keeping the newest calls, and says so', async () => {
    const app = await start({ tail: { replayLimit: 5 } });
    const calls = Array.from({ length: 8 }, (_, i) => makeCall({ at: i * 1_000_000 }));
    app.store.writeEvents(calls.map(finished));

    const client = await catchUp(`?since=${Math.floor(T0 / 1000)}`);
    expect(client.ofType('call.finished').map((m) => m.call?.id)).toEqual(calls.slice(3).map((c) => c.id));
    const done = client.ofType('replay.done')[0];
    expect(done).toMatchObject({ calls: 5, capped: true });
    expect(done?.message).toContain('capped at 5 calls');
  });

  it('replays nothing but still goes live when no call matches', async () => {
    const app = await start();
    const client = await catchUp(`?since=${Date.now() + 60_000}`);
    expect(client.ofType('replay.done')).toEqual([{ type: 'replay.done', calls: 0, capped: false }]);
    const call = makeCall();
    app.collector.emit(finished(call));
    await client.waitFor((m) => m.call?.id === call.id);
  });
});

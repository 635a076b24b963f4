// The live tail over a real websocket: what a connected client receives as
// the collector publishes calls, and how its filter (query or message)
// narrows that.
import { describe, expect, it } from 'vitest';
import { tailServerMessageSchema } from '../../api/schemas/tail.js';
import { stream } from './harness.js';
import { finished, makeCall, started, updated, useTailApp } from './tail-harness.js';

const tail = useTailApp();
const connect = (query = '') => tail.connect(query, 'hello');

describe('a tail client', () => {
  it('is greeted with a hello naming its filter and whether it replays', async () => {
    const client = await connect('?namespace=demo&failed=true');
    expect(client.messages[0]).toEqual({ type: 'hello', protocol: 1, filter: { namespace: 'demo', failed: true }, replay: null });
  });

  it('receives a call as it starts and again when it finishes, with its exit code and duration', async () => {
    const client = await connect();
    const call = makeCall({ exit: 0, durationMs: 87.5 });

    tail.app.collector.emit(started(call));
    const start = await client.waitFor((m) => m.type === 'call.started');
    expect(start.call).toMatchObject({
      id: call.id,
      status: 'running',
      command: 'ADD',
      plugin: 'bridge',
      pod: { namespace: 'demo', name: 'web-0', uid: 'uid-web-0' },
      exitCode: null,
      durationMs: null,
      ok: null,
    });

    tail.app.collector.emit(finished(call));
    const end = await client.waitFor((m) => m.type === 'call.finished');
    expect(end.call).toMatchObject({ id: call.id, status: 'finished', exitCode: 0, ok: true, durationMs: 87.5 });
    expect(end.call?.endedAt).toBe(new Date((call.startedAtUs + 87_500) / 1000).toISOString());
  });

  it('receives a call changed after its finish once more as call.updated (never a second call.finished), in the published contract', async () => {
    const client = await connect();
    const other = await connect('?pod=web-1');
    const call = makeCall({ exit: 0 });
    const late = { ...call, stderr: stream('late\n'), stderrAfterExitOffset: 0 };
    tail.app.collector.emit(started(call), finished(call));
    tail.app.collector.emit(updated(late));
    const update = await client.waitFor((m) => m.type === 'call.updated');
    expect(client.callLog()).toEqual([`call.started ${call.id}`, `call.finished ${call.id}`, `call.updated ${call.id}`]);
    expect(update.call).toMatchObject({ id: call.id, status: 'finished', ok: true, outputAfterExit: { stdout: null, stderr: 0 }, payload: { stderr: { bytes: 5, totalBytes: 5 } } });
    expect(tailServerMessageSchema.safeParse(update).success).toBe(true);
    // The filter applies to updates as to the rest: a later call of web-1 is all the other client gets.
    const marker = makeCall({ podName: 'web-1' });
    tail.app.collector.emit(finished(marker));
    await other.waitFor((m) => m.call?.id === marker.id);
    expect(other.callLog()).toEqual([`call.finished ${marker.id}`]);
  });

  it('receives a failed call with its non-zero exit code', async () => {
    const client = await connect();
    const call = makeCall({ exit: 11, plugin: 'host-local' });
    tail.app.collector.emit(started(call), finished(call));
    const end = await client.waitFor((m) => m.type === 'call.finished');
    expect(end.call).toMatchObject({ id: call.id, plugin: 'host-local', exitCode: 11, ok: false });
  });

  it('receives calls in the order the collector published them, across batches', async () => {
    const client = await connect();
    const calls = Array.from({ length: 20 }, (_, i) => makeCall({ at: i * 1000 }));
    for (const call of calls) tail.app.collector.emit(started(call));
    tail.app.collector.emit(...calls.map(finished));
    await client.waitForCount('call.finished', 20);
    expect(client.callLog()).toEqual([...calls.map((c) => `call.started ${c.id}`), ...calls.map((c) => `call.finished ${c.id}`)]);
  });

  it('does not see VERSION probes unless it asks for them', async () => {
    const plain = await connect();
    const withVersion = await connect('?includeVersion=true');
    const probe = makeCall({ command: 'VERSION', plugin: 'loopback' });
    const add = makeCall();
    tail.app.collector.emit(finished(probe), finished(add));

    await withVersion.waitForCount('call.finished', 2);
    await plain.waitForCount('call.finished', 1);
    expect(plain.callLog()).toEqual([`call.finished ${add.id}`]);
    expect(withVersion.callLog()).toEqual([`call.finished ${probe.id}`, `call.finished ${add.id}`]);
  });
});

describe('a tail filter given in the query', () => {
  it('by pod only lets that pod’s calls through', async () => {
    const client = await connect('?namespace=demo&pod=web-1');
    const other = makeCall({ podName: 'web-0' });
    const mine = makeCall({ podName: 'web-1' });
    const otherNamespace = makeCall({ namespace: 'prod', podName: 'web-1' });
    tail.app.collector.emit(finished(other), finished(mine), finished(otherNamespace));
    // A marker that matches, to know everything before it was seen.
    const marker = makeCall({ podName: 'web-1', command: 'DEL' });
    tail.app.collector.emit(finished(marker));
    await client.waitFor((m) => m.call?.id === marker.id);
    expect(client.callLog()).toEqual([`call.finished ${mine.id}`, `call.finished ${marker.id}`]);
  });

  it('failed=true only lets calls that ended badly through, never their start', async () => {
    const client = await connect('?failed=true');
    const ok = makeCall({ exit: 0 });
    const bad = makeCall({ exit: 1 });
    tail.app.collector.emit(started(ok), started(bad), finished(ok), finished(bad));
    await client.waitFor((m) => m.call?.id === bad.id);
    expect(client.callLog()).toEqual([`call.finished ${bad.id}`]);
  });

  it('by command and plugin lets only those calls through', async () => {
    const client = await connect('?command=DEL&plugin=bridge');
    const add = makeCall({ command: 'ADD' });
    const delIpam = makeCall({ command: 'DEL', plugin: 'host-local' });
    const del = makeCall({ command: 'DEL' });
    tail.app.collector.emit(finished(add), finished(delIpam), finished(del));
    await client.waitFor((m) => m.call?.id === del.id);
    expect(client.callLog()).toEqual([`call.finished ${del.id}`]);
  });

  it('applies to one client only: another with no filter still gets everything', async () => {
    const filtered = await connect('?pod=web-1');
    const all = await connect();
    const a = makeCall({ podName: 'web-0' });
    const b = makeCall({ podName: 'web-1' });
    tail.app.collector.emit(finished(a), finished(b));
    await all.waitForCount('call.finished', 2);
    await filtered.waitFor((m) => m.call?.id === b.id);
    expect(filtered.callLog()).toEqual([`call.finished ${b.id}`]);
  });
});

describe('a filter message', () => {
  it('replaces the filter from the next event on and is acknowledged with the new filter', async () => {
    const client = await connect('?pod=web-0');
    const before = makeCall({ podName: 'web-1' });
    tail.app.collector.emit(finished(before));

    const ack = await client.request({ type: 'filter', pod: 'web-1', command: 'DEL' }, 'filter.updated');
    expect(ack).toEqual({ type: 'filter.updated', filter: { pod: 'web-1', command: 'DEL' } });

    const add = makeCall({ podName: 'web-1', command: 'ADD' });
    const del = makeCall({ podName: 'web-1', command: 'DEL' });
    const otherPod = makeCall({ podName: 'web-0', command: 'DEL' });
    tail.app.collector.emit(finished(add), finished(otherPod), finished(del));
    await client.waitFor((m) => m.call?.id === del.id);
    expect(client.callLog()).toEqual([`call.finished ${del.id}`]);
  });

  it('can switch to failed calls only and back to everything', async () => {
    const client = await connect();
    await client.request({ type: 'filter', failed: true }, 'filter.updated');
    const ok = makeCall();
    const bad = makeCall({ exit: 2 });
    tail.app.collector.emit(finished(ok), finished(bad));
    await client.waitFor((m) => m.call?.id === bad.id);

    await client.request({ type: 'filter' }, 'filter.updated');
    const later = makeCall();
    tail.app.collector.emit(finished(later));
    await client.waitFor((m) => m.call?.id === later.id);
    expect(client.callLog()).toEqual([`call.finished ${bad.id}`, `call.finished ${later.id}`]);
  });
});

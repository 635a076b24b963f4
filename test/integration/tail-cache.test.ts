// libcni cache changes on the live tail: what a connected client receives as
// the cache watcher publishes files written and removed, and which filters
// let them through.
import { describe, expect, it } from 'vitest';
import type { CacheEntry, CacheEvent } from '../../collector/cache/cache-types.js';
import { finished, makeCall, startTestApp, T0, TailClient, type Received, useTailApp } from './tail-harness.js';

const tail = useTailApp();
const connect = (query = '') => tail.connect(query, 'hello');

const T0_MS = T0 / 1000;

function entry(containerId: string, pod: { namespace: string; name: string } | null): CacheEntry {
  return {
    path: `/var/lib/cni/results/podnet-${containerId}-eth0`,
    dir: '/var/lib/cni/results',
    format: 'cniCacheV1',
    containerId,
    networkName: 'podnet',
    ifName: 'eth0',
    netns: `/var/run/netns/cni-${containerId}`,
    cniArgs: pod ? [['K8S_POD_NAMESPACE', pod.namespace], ['K8S_POD_NAME', pod.name]] : [],
    capabilityArgs: null,
    config: { cniVersion: '1.0.0', name: 'podnet', plugins: [{ type: 'bridge' }] },
    configProblem: null,
    result: { cniVersion: '1.0.0', ips: [{ address: '10.22.0.5/16' }] },
    ips: ['10.22.0.5'],
    pod: pod ? { ...pod, uid: null, infraContainerId: null } : null,
    digest: containerId,
    mtimeMs: T0_MS,
  };
}

const added = (e: CacheEntry, atMs = T0_MS + 10): CacheEvent => ({ type: 'cache.added', entry: e, atMs });
const removed = (e: CacheEntry, atMs = T0_MS + 20): CacheEvent => ({ type: 'cache.removed', path: e.path, dir: e.dir, atMs });

/** "type containerId" of every cache message, in order. */
const cacheLog = (client: TailClient) =>
  client.messages.filter((m) => m.type.startsWith('cache.')).map((m: Received) => `${m.type} ${(m.entry as { containerId: string | null }).containerId}`);

describe('a tail client', () => {
  it('receives a cache file as libcni writes it, with its network, pod, IPs and result', async () => {
    const client = await connect();
    tail.app.cacheWatcher.emit(added(entry('aaa', { namespace: 'demo', name: 'web-0' })));
    const msg = await client.waitFor((m) => m.type === 'cache.added');
    expect(msg).toEqual({
      type: 'cache.added',
      entry: {
        path: '/var/lib/cni/results/podnet-aaa-eth0',
        dir: '/var/lib/cni/results',
        format: 'cniCacheV1',
        containerId: 'aaa',
        networkName: 'podnet',
        ifName: 'eth0',
        netns: '/var/run/netns/cni-aaa',
        pod: { namespace: 'demo', name: 'web-0', uid: null },
        ips: ['10.22.0.5'],
        result: { cniVersion: '1.0.0', ips: [{ address: '10.22.0.5/16' }] },
        writtenAt: new Date(T0_MS).toISOString(),
        at: new Date(T0_MS + 10).toISOString(),
      },
    });
  });

  it('is told what a removed file held, though the watcher names only its path', async () => {
    const e = entry('aaa', { namespace: 'demo', name: 'web-0' });
    // Announced before the client connected, as the startup scan does.
    tail.app.cacheWatcher.emit(added(e));
    const client = await connect();
    tail.app.cacheWatcher.emit(removed(e));
    const msg = await client.waitFor((m) => m.type === 'cache.removed');
    expect(msg.entry).toMatchObject({ path: e.path, containerId: 'aaa', ips: ['10.22.0.5'], pod: { name: 'web-0' }, at: new Date(T0_MS + 20).toISOString() });
  });

  it('gets a removal of a file never announced with only its path', async () => {
    const client = await connect();
    tail.app.cacheWatcher.emit({ type: 'cache.removed', path: '/var/lib/cni/results/x', dir: '/var/lib/cni/results', atMs: T0_MS });
    const msg = await client.waitFor((m) => m.type === 'cache.removed');
    expect(msg.entry).toMatchObject({ path: '/var/lib/cni/results/x', format: null, containerId: null, ips: [] });
  });

  it('gets a rewrite as cache.added and sees nothing of IP reservations, problems or reconciliation', async () => {
    const client = await connect();
    const e = entry('aaa', null);
    tail.app.cacheWatcher.emit(
      added(e),
      { type: 'ip.allocated', allocation: { path: '/var/lib/cni/networks/podnet/10.22.0.5', dir: '/var/lib/cni/networks', network: 'podnet', ip: '10.22.0.5', containerId: 'aaa', ifName: 'eth0', mtimeMs: T0_MS }, atMs: T0_MS },
      { type: 'cache.problem', problem: { kind: 'empty-file', path: '/var/lib/cni/results/y', dir: '/var/lib/cni/results', message: 'empty' }, atMs: T0_MS },
      { type: 'cache.reconciled', atMs: T0_MS, dirs: [], livePaths: [], watchingResults: true },
      { type: 'cache.changed', entry: { ...e, ips: ['10.22.0.9'] }, atMs: T0_MS + 30 },
    );
    await client.waitForCount('cache.added', 2);
    expect(client.messages.slice(1).map((m) => m.type)).toEqual(['cache.added', 'cache.added']);
    expect(client.messages[2]!.entry).toMatchObject({ ips: ['10.22.0.9'] });
  });

  it('keeps calls and cache messages in the order they happened', async () => {
    const client = await connect();
    const add = makeCall();
    const e = entry('aaa', null);
    tail.app.collector.emit(finished(add));
    tail.app.cacheWatcher.emit(added(e));
    const del = makeCall({ command: 'DEL' });
    tail.app.collector.emit(finished(del));
    tail.app.cacheWatcher.emit(removed(e));
    await client.waitFor((m) => m.type === 'cache.removed');
    expect(client.messages.slice(1).map((m) => m.type)).toEqual(['call.finished', 'cache.added', 'call.finished', 'cache.removed']);
  });
});

describe('a tail filter and cache messages', () => {
  const web0 = entry('aaa', { namespace: 'demo', name: 'web-0' });
  const web1 = entry('bbb', { namespace: 'demo', name: 'web-1' });
  const prod = entry('ccc', { namespace: 'prod', name: 'web-0' });
  const podless = entry('ddd', null);
  const marker = entry('zzz', null);

  it('by namespace and pod shows only that pod\'s entries, as it shows only its calls: pod-less ones (podman) do not match', async () => {
    const client = await connect('?namespace=demo&pod=web-0');
    const podlessCall = makeCall({ pod: null, cniArgs: null, env: { CNI_COMMAND: 'ADD', CNI_IFNAME: 'eth0' } });
    const web0Call = makeCall({ namespace: 'demo', podName: 'web-0' });
    tail.app.cacheWatcher.emit(added(web0), added(web1), added(prod), added(podless), removed(podless), removed(web0));
    tail.app.collector.emit(finished(podlessCall), finished(web0Call));
    // Everything is delivered in order: once the pod's call is in, every cache message before it was judged.
    await client.waitFor((m) => m.call?.id === web0Call.id);
    expect(cacheLog(client)).toEqual(['cache.added aaa', 'cache.removed aaa']);
    expect(client.messages.filter((m) => m.type === 'call.finished').map((m) => m.call?.id)).toEqual([web0Call.id]);
  });

  it('by namespace alone shows the namespace\'s entries; no filter shows every entry, pod-less ones included', async () => {
    const byNamespace = await connect('?namespace=demo');
    const all = await connect();
    tail.app.cacheWatcher.emit(added(web0), added(web1), added(prod), added(podless), added(marker));
    await all.waitFor((m) => m.type === 'cache.added' && (m.entry as { containerId: string }).containerId === 'zzz');
    const call = makeCall({ namespace: 'demo', podName: 'web-1' });
    tail.app.collector.emit(finished(call));
    await byNamespace.waitFor((m) => m.call?.id === call.id);
    expect(cacheLog(byNamespace)).toEqual(['cache.added aaa', 'cache.added bbb']);
    expect(cacheLog(all)).toEqual(['cache.added aaa', 'cache.added bbb', 'cache.added ccc', 'cache.added ddd', 'cache.added zzz']);
  });

  it.each(['?command=ADD', '?plugin=bridge', '?failed=false'])('%s, being about calls, keeps every cache message out', async (query) => {
    const client = await connect(query);
    tail.app.cacheWatcher.emit(added(web0), added(podless));
    // A call that matches every one of these filters, sent after: once it is in, the cache messages would have been too.
    const call = makeCall({ command: 'ADD', plugin: 'bridge', exit: 0 });
    tail.app.collector.emit(finished(call));
    await client.waitFor((m) => m.call?.id === call.id);
    expect(cacheLog(client)).toEqual([]);
  });

  it('follows a filter message: cache messages stop once it names a command', async () => {
    const client = await connect();
    tail.app.cacheWatcher.emit(added(web0));
    await client.waitFor((m) => m.type === 'cache.added');
    await client.request({ type: 'filter', command: 'DEL' }, 'filter.updated');
    tail.app.cacheWatcher.emit(removed(web0));
    const del = makeCall({ command: 'DEL' });
    tail.app.collector.emit(finished(del));
    await client.waitFor((m) => m.call?.id === del.id);
    expect(cacheLog(client)).toEqual(['cache.added aaa']);
  });

  it('holds a cache message that arrives during a ?since= replay back until the replay is done', async () => {
    // Its own app: the cache file is written while the replay reads the store.
    let emitted = false;
    const own = await startTestApp({
      beforeListCalls: () => {
        if (emitted) return;
        emitted = true;
        own.cacheWatcher.emit(added(web0));
      },
    });
    let client: TailClient | null = null;
    try {
      own.store.writeEvents([finished(makeCall({ at: 0 }))]);
      client = await TailClient.connect(own.wsBase, `?since=${T0_MS - 1000}`);
      await client.waitFor((m) => m.type === 'cache.added');
      expect(emitted).toBe(true);
      expect(client.messages.map((m) => m.type)).toEqual(['hello', 'call.finished', 'replay.done', 'cache.added']);
    } finally {
      client?.close();
      await own.close();
    }
  });
});

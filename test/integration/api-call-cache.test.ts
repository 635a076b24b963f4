// libcni's cache entry inside the call detail and the pod view: the version a
// chain's calls wrote or removed, matched by container, ifname and network.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CacheEntry } from '../../collector/cache/cache-types.js';
import { delegatedIpam, getJson, makeCall, startApi, T0_MS, type ApiHarness } from './api-harness.js';

const S = 1_000_000; // µs
const CONTAINER = 'sandbox-web-0';

const entry = (network: string, over: Partial<CacheEntry> = {}): CacheEntry => ({
  path: `/var/lib/cni/results/${network}-${CONTAINER}-eth0`,
  dir: '/var/lib/cni/results',
  format: 'cniCacheV1',
  containerId: CONTAINER,
  networkName: network,
  ifName: 'eth0',
  netns: '/var/run/netns/cni-web-0',
  cniArgs: [['K8S_POD_NAMESPACE', 'demo'], ['K8S_POD_NAME', 'web-0']],
  capabilityArgs: null,
  config: { cniVersion: '1.0.0', name: network, plugins: [{ type: 'bridge' }, { type: 'portmap' }] },
  configProblem: null,
  result: { ips: [{ address: '10.22.0.5/16' }] },
  ips: ['10.22.0.5'],
  pod: { namespace: 'demo', name: 'web-0', uid: null, infraContainerId: null },
  digest: network,
  mtimeMs: T0_MS + 200,
  ...over,
});

// A bridge → portmap chain ADDed, then DELed in reverse order; libcni writes
// the file after the whole chain and removes it after the whole DEL.
const bridgeAdd = makeCall({ at: 0 });
const ipamAdd = delegatedIpam(bridgeAdd);
const portmapAdd = makeCall({ at: 100_000, plugin: 'portmap' });
const portmapDel = makeCall({ at: 5 * S, command: 'DEL', plugin: 'portmap' });
const bridgeDel = makeCall({ at: 5 * S + 100_000, command: 'DEL' });
const otherPod = makeCall({ at: 7 * S, podName: 'db-0' });

describe('cache entries in the call detail and the pod view', () => {
  let h: ApiHarness;

  beforeAll(async () => {
    h = await startApi({ cache: true });
    h.write(bridgeAdd, ipamAdd, portmapAdd, portmapDel, bridgeDel, otherPod);
    h.cache!.writeCacheEvents([
      { type: 'cache.reconciled', atMs: T0_MS - 500, dirs: ['/var/lib/cni/results'], livePaths: [], watchingResults: true },
      { type: 'cache.added', entry: entry('podnet'), atMs: T0_MS + 210 },
      // Same container and ifname on another network: never this chain's entry.
      { type: 'cache.added', entry: entry('other', { ips: ['10.99.0.5'] }), atMs: T0_MS + 220 },
      { type: 'cache.removed', path: entry('podnet').path, dir: '/var/lib/cni/results', atMs: T0_MS + 5300 },
    ]);
    h.cache!.refresh(T0_MS + 9000); // after the settle time of the removal
  });
  afterAll(() => h.close());

  const detail = async (id: string) => {
    const { status, body } = await getJson<{ cache: Record<string, unknown> | null }>(h.app, `/api/v1/calls/${id}`);
    expect(status).toBe(200);
    return body.cache;
  };

  it('shows the entry the chain wrote in the last ADD of the chain, which it is linked to', async () => {
    expect(await detail(portmapAdd.id)).toMatchObject({
      networkName: 'podnet',
      containerId: CONTAINER,
      addCallId: portmapAdd.id,
      delCallId: bridgeDel.id,
      ips: ['10.22.0.5'],
      removedAt: new Date(T0_MS + 5300).toISOString(),
      config: { name: 'podnet' },
    });
  });

  it('shows the same entry in the earlier ADD and both DELs of the chain', async () => {
    for (const call of [bridgeAdd, portmapDel, bridgeDel]) {
      expect(await detail(call.id)).toMatchObject({ networkName: 'podnet', addCallId: portmapAdd.id });
    }
  });

  it('shows no entry for a delegated IPAM call or a container without one', async () => {
    expect(await detail(ipamAdd.id)).toBeNull();
    expect(await detail(otherPod.id)).toBeNull();
  });

  it("lists every version of the sandbox's entries in the pod view, oldest first", async () => {
    const { status, body } = await getJson<{ sandboxes: Array<{ containerId: string; cache: Array<Record<string, unknown>> }> }>(h.app, '/api/v1/pods/demo/web-0');
    expect(status).toBe(200);
    expect(body.sandboxes).toHaveLength(1);
    expect(body.sandboxes[0]!.cache.map((e) => [e.networkName, e.removedAt !== null])).toEqual([
      ['podnet', true],
      ['other', false],
    ]);
    const other = await getJson<{ sandboxes: Array<{ cache: unknown[] }> }>(h.app, '/api/v1/pods/demo/db-0');
    expect(other.body.sandboxes[0]!.cache).toEqual([]);
  });

  it('answers a null entry and empty sandbox lists when the daemon does not watch caches', async () => {
    const bare = await startApi();
    bare.write(bridgeAdd);
    try {
      expect((await getJson<{ cache: unknown }>(bare.app, `/api/v1/calls/${bridgeAdd.id}`)).body.cache).toBeNull();
      expect((await getJson<{ sandboxes: Array<{ cache: unknown[] }> }>(bare.app, '/api/v1/pods/demo/web-0')).body.sandboxes[0]!.cache).toEqual([]);
    } finally {
      await bare.close();
    }
  });
});

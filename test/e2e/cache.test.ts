/**
 * libcni's cache beside the calls, with a real runtime: podman 4.3 (CNI
 * backend) runs a container, libcni writes its cache file and host-local
 * its reservation; the daemon stores the entry linked to the ADD, marks it
 * removed and linked to the DEL when the container goes, and answers the
 * IP's history. Broken state is written into directories of our own (a
 * second cache dir, the test network's host-local dataDir), so the
 * machine's /var/lib/cni is only read.
 */

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from './support/daemon.js';
import { createPodmanEnv, type PodmanEnv } from './support/podman.js';
import { requirePrivilegedSuite } from './support/privileged.js';

const canRun = requirePrivilegedSuite();

interface Entry {
  id: number;
  path: string;
  fileMtime: string;
  firstSeen: string;
  containerId: string;
  networkName: string;
  ifName: string;
  ips: string[];
  config: { name?: string; plugins?: { type: string }[] };
  cniArgs: [string, string][];
  pod: unknown;
  result: { ips?: { address: string }[] } | null;
  addCallId: string | null;
  delCallId: string | null;
  removedAt: string | null;
}
interface CallRow {
  id: string;
  plugin: string | null;
  command: string | null;
  parentId: string | null;
  startedAt: string;
}
interface CallDetailBody {
  id: string;
  config: { prevResult?: unknown } | null;
  result: unknown;
  children: CallRow[];
  cache: Entry | null;
}
interface Holding {
  source: string;
  network: string | null;
  containerId: string | null;
  path: string;
  to: string | null;
}
interface Finding {
  kind: string;
  path: string | null;
  message: string;
}

describe.runIf(canRun)('libcni cache and host-local state, with podman', () => {
  let daemon: RunningDaemon;
  let pm: PodmanEnv;
  let scratch: string;

  const get = async <T>(route: string): Promise<T> => {
    const res = await fetch(`${daemon.url}${route}`);
    expect(res.status, await res.clone().text()).toBe(200);
    return (await res.json()) as T;
  };
  const poll = async <T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 20_000): Promise<T> => {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const v = await probe();
      if (v) return v;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}\n${daemon.logs().slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };

  /**
   * The container's cache entry once it is linked to the last top-level ADD of its chain, with those ADDs
   * oldest first. Waits for every call of the chain to be stored: on a loaded node the last ones can arrive
   * after the first link was made, which the store then corrects (RELINK_MS in store/cache/cache-links.ts).
   */
  const linkedToChainEnd = async (id: string, what: string) => {
    let seen = 'no entry';
    try {
      return await poll(
        what,
        async () => {
          const { items } = await get<{ items: Entry[] }>(`/api/v1/cache?containerId=${id}`);
          const entry = items.find((e) => e.addCallId !== null);
          const chain = (entry?.config.plugins ?? []).map((p) => p.type);
          if (!entry || chain.length === 0) return null;
          const { items: rows } = await get<{ items: CallRow[] }>(`/api/v1/calls?containerId=${id}&command=ADD`);
          const adds = rows.filter((c) => c.parentId === null).sort((a, b) => a.startedAt.localeCompare(b.startedAt));
          const span = (c: CallRow) => {
            const full = daemon.store.getCall(c.id);
            return `${c.plugin} ${c.id} ${full?.startedAtUs ?? '?'}..${full?.endedAtUs ?? '?'}`;
          };
          seen = `entry written ${entry.fileMtime}, first seen ${entry.firstSeen}, linked to ${entry.addCallId} (chain ${chain.join(', ')}); top-level ADDs stored (µs): ${adds.map(span).join(', ')}`;
          return adds.length === chain.length && entry.addCallId === adds.at(-1)!.id ? { entry, adds, chain } : null;
        },
        40_000,
      );
    } catch (err) {
      throw new Error(`${seen}\n${(err as Error).message}`, { cause: err });
    }
  };

  beforeAll(async () => {
    pm = await createPodmanEnv({ networkPrefix: 'cnirec-cache' });
    await pm.ensureImage();
    scratch = mkdtempSync(path.join(tmpdir(), 'cnirec-e2e-cache-'));
    mkdirSync(path.join(scratch, 'results'), { mode: 0o700 });
    daemon = await startDaemon({
      extraArgs: [
        '--cni-cache-dirs',
        `/var/lib/cni/results,${path.join(scratch, 'results')}`,
        '--host-local-dirs',
        // The machine's too: podman's default network keeps its reservations there.
        `${pm.network.dataDir},/var/lib/cni/networks`,
        '--cache-rescan-ms',
        '1000',
      ],
    });
  });
  afterAll(async () => {
    await pm?.cleanup();
    await daemon?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('stores the entry linked to the ADD, then removed and linked to the DEL, and the IP history', async () => {
    const id = await pm.runContainer({ cmd: ['sleep', '120'], name: `cnirec-cache-${Date.now().toString(36)}` });
    const entry = await poll('the cache entry linked to its ADD', async () => {
      const { items } = await get<{ items: Entry[] }>(`/api/v1/cache?containerId=${id}`);
      return items.find((e) => e.addCallId !== null);
    });
    expect(entry).toMatchObject({ networkName: pm.network.name, ifName: 'eth0', config: { name: pm.network.name }, removedAt: null });
    const add = daemon.store.getCall(entry.addCallId!);
    expect(add).toMatchObject({ command: 'ADD', containerId: id, ifname: 'eth0', parentId: null, ok: true });
    const ip = entry.ips[0]!;
    expect(ip.startsWith(pm.network.subnet.split('.').slice(0, 3).join('.'))).toBe(true);

    const held = await poll('the IP held by the container in host-local and the cache', async () => {
      const { history } = await get<{ history: Holding[] }>(`/api/v1/ips/${ip}`);
      const mine = history.filter((h) => h.containerId === id && h.to === null);
      return mine.some((h) => h.source === 'host-local') && mine.some((h) => h.source === 'cache') ? mine : null;
    });
    expect(held.length).toBeGreaterThanOrEqual(2);

    await pm.removeContainer(id);
    const removed = await poll('the entry removed and linked to its DEL', async () => {
      const { items } = await get<{ items: Entry[] }>(`/api/v1/cache?containerId=${id}&includeRemoved=true`);
      return items.find((e) => e.removedAt !== null && e.delCallId !== null);
    });
    expect(daemon.store.getCall(removed.delCallId!)).toMatchObject({ command: 'DEL', containerId: id, parentId: null });
    expect((await get<{ items: Entry[] }>(`/api/v1/cache?containerId=${id}`)).items).toEqual([]);
    const after = await poll('the IP released', async () => {
      const { history } = await get<{ history: Holding[] }>(`/api/v1/ips/${ip}`);
      return history.filter((h) => h.containerId === id).every((h) => h.to !== null) ? history : null;
    });
    expect(after.filter((h) => h.containerId === id).length).toBeGreaterThanOrEqual(2);
  });

  it('on podman\'s built-in default network (no --network): the entry linked to the chain\'s last ADD, then to a DEL, and the IP history', async () => {
    // The network every `podman run` without --network gets on a node: "podman", from the machine's
    // /etc/cni/net.d (or built by podman in memory when that file is missing). Its host-local state is
    // the machine's /var/lib/cni/networks/podman, which the suite's daemon watches.
    const def = await createPodmanEnv({ networkPrefix: 'cnirec-default', defaultNetwork: 'podman' });
    try {
      await def.ensureImage();
      const name = `cnirec-default-${Date.now().toString(36)}`;
      const id = await def.runContainer({ cmd: ['sleep', '120'], name, network: null });
      const { entry, adds, chain } = await linkedToChainEnd(id, 'the default network\'s cache entry linked to the last ADD of its chain');
      expect(entry).toMatchObject({ path: `/var/lib/cni/results/podman-${id}-eth0`, networkName: 'podman', ifName: 'eth0', config: { name: 'podman' }, removedAt: null });
      // podman names the container in CNI_ARGS but no Kubernetes namespace: no pod attribution.
      expect(entry.cniArgs).toContainEqual(['K8S_POD_NAME', name]);
      expect(entry.pod).toBeNull();

      // Every plugin of the conflist ran as a top-level ADD, in order; the entry is tied to the last one.
      expect(chain[0]).toBe('bridge');
      expect(adds.map((c) => c.plugin)).toEqual(chain);
      expect(daemon.store.getCall(entry.addCallId!)).toMatchObject({ command: 'ADD', containerId: id, ifname: 'eth0', ok: true });

      const ip = entry.ips[0]!;
      expect(ip).toMatch(/^10\.88\./);
      const held = await poll('the IP held in host-local and the cache', async () => {
        const { history } = await get<{ history: Holding[] }>(`/api/v1/ips/${ip}`);
        const mine = history.filter((h) => h.containerId === id && h.to === null);
        return mine.some((h) => h.source === 'host-local') && mine.some((h) => h.source === 'cache') ? mine : null;
      });
      expect(held.find((h) => h.source === 'host-local')).toMatchObject({ network: 'podman', path: `/var/lib/cni/networks/podman/${ip}` });

      await def.removeContainer(id);
      const removed = await poll('the entry removed and linked to its DEL', async () => {
        const { items } = await get<{ items: Entry[] }>(`/api/v1/cache?containerId=${id}&includeRemoved=true`);
        return items.find((e) => e.removedAt !== null && e.delCallId !== null);
      });
      expect(removed.id).toBe(entry.id);
      const del = daemon.store.getCall(removed.delCallId!);
      expect(del).toMatchObject({ command: 'DEL', containerId: id, ifname: 'eth0', parentId: null });
      expect(chain).toContain(del?.plugin);
      expect((await get<{ items: Entry[] }>(`/api/v1/cache?containerId=${id}`)).items).toEqual([]);
      const after = await poll('the IP released', async () => {
        const { history } = await get<{ history: Holding[] }>(`/api/v1/ips/${ip}`);
        const mine = history.filter((h) => h.containerId === id);
        return mine.length >= 2 && mine.every((h) => h.to !== null) ? mine : null;
      });
      expect(after.map((h) => h.source).sort()).toEqual(['cache', 'host-local']);
    } finally {
      await def.cleanup();
    }
  });

  it('on a chained conflist, caches the final result and records each chained plugin as its own call with its prevResult', async () => {
    // bridge (+ host-local) → portmap → tuning → bandwidth, as libcni runs a conflist: one exec per plugin,
    // each fed the previous plugin's result. Ingress shaping only: egress would need the ifb module.
    const chained = await createPodmanEnv({
      networkPrefix: 'cnirec-chain',
      extraPlugins: [
        { type: 'portmap', capabilities: { portMappings: true } },
        { type: 'tuning', sysctl: { 'net.ipv4.conf.eth0.accept_redirects': '0' } },
        { type: 'bandwidth', ingressRate: 8_000_000, ingressBurst: 16_000 },
      ],
    });
    try {
      await chained.ensureImage();
      const id = await chained.runContainer({ cmd: ['sleep', '120'], name: `cnirec-chain-${Date.now().toString(36)}`, extraArgs: ['-p', '18080:80'] });
      const { entry, adds } = await linkedToChainEnd(id, 'the chain\'s cache entry linked to the last ADD of the chain');
      expect(entry.config).toMatchObject({ name: chained.network.name, plugins: [{ type: 'bridge' }, { type: 'portmap' }, { type: 'tuning' }, { type: 'bandwidth' }] });
      expect(adds.map((c) => c.plugin)).toEqual(['bridge', 'portmap', 'tuning', 'bandwidth']);
      const details = await Promise.all(adds.map((c) => get<CallDetailBody>(`/api/v1/calls/${c.id}`)));
      const [bridge, ...rest] = details;
      expect(bridge!.children.map((c) => c.plugin)).toEqual(['host-local']);
      expect(bridge!.config?.prevResult).toBeUndefined();
      // Each chained plugin was handed exactly what the one before it answered.
      rest.forEach((d, i) => {
        expect(d.children).toEqual([]);
        expect(d.config?.prevResult).toEqual(details[i]!.result);
      });
      // libcni caches the last plugin's answer, and the entry is tied to that call; every ADD of the chain shows it.
      const last = details.at(-1)!;
      expect(entry.addCallId).toBe(last.id);
      expect(entry.result).toEqual(last.result);
      expect(entry.result?.ips?.[0]?.address.split('/')[0]).toBe(entry.ips[0]);
      for (const d of details) expect(d.cache).toMatchObject({ id: entry.id, addCallId: last.id });

      await chained.removeContainer(id);
      const removed = await poll('the chain\'s entry removed and linked to a DEL', async () => {
        const { items: all } = await get<{ items: Entry[] }>(`/api/v1/cache?containerId=${id}&includeRemoved=true`);
        return all.find((e) => e.removedAt !== null && e.delCallId !== null);
      });
      expect(daemon.store.getCall(removed.delCallId!)).toMatchObject({ command: 'DEL', containerId: id, parentId: null });
    } finally {
      await chained.cleanup();
    }
  });

  it('reconciles a daemon restart while the container runs: one entry, no duplicates', async () => {
    // Both daemons share one database (the last --db wins); the suite's daemon keeps its own.
    const db = path.join(scratch, 'restart', 'cnirec.db');
    const args = ['--cni-cache-dirs', '/var/lib/cni/results', '--host-local-dirs', pm.network.dataDir, '--db', db];
    const id = await pm.runContainer({ cmd: ['sleep', '120'], name: `cnirec-restart-${Date.now().toString(36)}` });
    const live = async (d: RunningDaemon, query: string) => {
      const res = await fetch(`${d.url}/api/v1/cache?containerId=${id}${query}`);
      return ((await res.json()) as { items: Entry[] }).items;
    };
    let first: RunningDaemon | null = await startDaemon({ extraArgs: args });
    try {
      const d = first;
      await poll('the first daemon to import the entry', async () => (await live(d, '')).length === 1);
      await first.stop();
      first = null;
    } finally {
      await first?.stop();
    }
    const second = await startDaemon({ extraArgs: args });
    try {
      await poll('the second daemon to reconcile', async () => (await live(second, '')).length === 1);
      expect(await live(second, '&includeRemoved=true')).toHaveLength(1);
      const ip = (await live(second, ''))[0]!.ips[0]!;
      const { history } = (await (await fetch(`${second.url}/api/v1/ips/${ip}`)).json()) as { history: Holding[] };
      expect(history.filter((h) => h.containerId === id && h.source === 'host-local')).toHaveLength(1);
    } finally {
      await second.stop();
      await pm.removeContainer(id);
    }
  });

  it('reports a corrupt cache file and a leaked host-local IP as findings', async () => {
    const corrupt = path.join(scratch, 'results', `${pm.network.name}-${'e'.repeat(64)}-eth0`);
    writeFileSync(corrupt, '{"kind":"cniCacheV1","containerId":"eeee', { mode: 0o600 });
    const leakIp = `${pm.network.subnet.split('.').slice(0, 3).join('.')}.250`;
    const leakFile = path.join(pm.network.dataDir, pm.network.name, leakIp);
    mkdirSync(path.dirname(leakFile), { recursive: true });
    writeFileSync(leakFile, `${'f'.repeat(64)}\r\neth0`);

    const findings = await poll(
      'the corrupt file and the leak as findings',
      async () => {
        const { items } = await get<{ items: Finding[] }>('/api/v1/findings');
        const c = items.find((f) => f.kind === 'corrupt-json' && f.path === corrupt);
        const l = items.find((f) => f.kind === 'leaked-ip' && f.path === leakFile);
        return c && l ? { c, l } : null;
      },
      30_000,
    );
    expect(findings.c.message).toMatch(/not valid JSON/);
    expect(findings.l.message).toContain(leakIp);

    rmSync(corrupt);
    rmSync(leakFile);
    await poll('both resolved', async () => {
      const { items } = await get<{ items: Finding[] }>('/api/v1/findings');
      return !items.some((f) => f.path === corrupt || f.path === leakFile);
    });
  });
});

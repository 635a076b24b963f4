/**
 * The node's CNI setup through the daemon's own wiring and the API, on real
 * files in a temp conf dir and a real SQLite file: conf versions stored as
 * they change, the version each call ran with, the diff, the "config
 * changed before failures" finding, binary provenance with the versions a
 * VERSION probe reported, and a GC compared with host-local's reservations.
 */

import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../api/app.js';
import type { CniCall, CollectorEvent } from '../../collector/types.js';
import { createRedactor } from '../../collector/index.js';
import { createNodeSetupWiring, type NodeSetupWiring } from '../../daemon/node-setup-wiring.js';
import { defaultRedactionRules } from '../../collector/redact/redaction-rules.js';
import { createCacheStore } from '../../store/cache/cache-store.js';
import { createFindingsReader } from '../../store/findings/findings-reader.js';
import { createConfigFailureDetector, createGcChecks } from '../../store/index.js';
import { finished, makeCall, stream, TRACER_STATUS } from './api-harness.js';
import { COLLECTOR_STATS, STORE_STATUS, tempStore, type TempStore } from './harness.js';

const conflist = (subnet: string) => `${JSON.stringify({ cniVersion: '1.0.0', name: 'net', plugins: [{ type: 'bridge', bridge: 'cni9', ipam: { type: 'host-local', ranges: [[{ subnet }]] } }] }, null, 2)}\n`;
const until = async <T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 5000): Promise<T> => {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

describe('the node CNI setup, stored and served', () => {
  let t: TempStore;
  let dir: string;
  let wiring: NodeSetupWiring;
  let app: Awaited<ReturnType<typeof buildApp>>;
  const confPath = () => join(dir, 'conf', '10-net.conflist');
  const get = async <T>(url: string): Promise<T> => {
    const res = await app.inject({ method: 'GET', url });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as T;
  };
  // Conf versions take effect at their mtime: the calls are timed around them.
  const now = Math.floor(Date.now() / 1000) * 1000;
  const V1_MS = now - 20 * 60_000;
  const V2_MS = now - 10 * 60_000;
  const add = (atMs: number, exit = 0) =>
    makeCall({ startedAtUs: atMs * 1000, exit, stdin: stream(JSON.stringify({ cniVersion: '1.0.0', name: 'net', type: 'bridge' })), ...(exit ? { stdout: stream('{"code":11,"msg":"invalid CIDR address: 10.300.0.0/24"}') } : {}) });

  beforeAll(async () => {
    t = tempStore('cnirec-node-setup-');
    dir = mkdtempSync(join(tmpdir(), 'cnirec-node-setup-files-'));
    mkdirSync(join(dir, 'conf'));
    mkdirSync(join(dir, 'bin'));
    for (const p of ['bridge', 'host-local']) copyFileSync('/bin/true', join(dir, 'bin', p));
    writeFileSync(confPath(), conflist('10.9.0.0/24'));
    utimesSync(confPath(), V1_MS / 1000, V1_MS / 1000);
    const redactor = createRedactor(defaultRedactionRules());
    wiring = createNodeSetupWiring(t.db, { cniConfDir: [join(dir, 'conf')], cniBinDir: [join(dir, 'bin')], cacheRescanMs: 200 }, pino({ level: 'silent' }), redactor);
    await wiring.start();
    app = await buildApp({
      logger: pino({ level: 'silent' }),
      tracerStatus: () => TRACER_STATUS,
      collectorStats: () => COLLECTOR_STATS,
      storeStatus: () => STORE_STATUS,
      store: t.store,
      findings: createFindingsReader(t.db),
      nodeCni: wiring.api,
      subscribeConf: wiring.subscribeConf,
    });
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    await wiring?.stop();
    t?.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores each version of a conf file, links each call to the version it ran with, and diffs them', async () => {
    const ok = add(V1_MS + 60_000);
    t.store.writeEvents([finished(ok)]);
    writeFileSync(confPath(), conflist('10.300.0.0/24'));
    utimesSync(confPath(), V2_MS / 1000, V2_MS / 1000);
    type Versions = { items: { id: number; validFrom: string; supersededAt: string | null; sha256: string; network: string }[] };
    const versions = await until('the second version', async () => {
      const v = await get<Versions>(`/api/v1/node/cni/conf-versions?path=${encodeURIComponent(confPath())}`);
      return v.items.length === 2 ? v.items : null;
    });
    const [v2, v1] = versions;
    expect(v1).toMatchObject({ validFrom: new Date(V1_MS).toISOString(), supersededAt: new Date(V2_MS).toISOString(), network: 'net' });
    expect(v2?.sha256).toBe(createHash('sha256').update(conflist('10.300.0.0/24')).digest('hex'));

    const failed = [add(V2_MS + 60_000, 1), add(V2_MS + 120_000, 1)];
    t.store.writeEvents(failed.map(finished));
    const setup = async (c: CniCall) => (await get<{ confVersion: { id: number } | null }>(`/api/v1/calls/${c.id}/setup`)).confVersion?.id;
    expect(await setup(ok)).toBe(v1?.id);
    expect(await setup(failed[0]!)).toBe(v2?.id);

    const diff = await get<{ from: { id: number }; to: { id: number }; diff: string }>(`/api/v1/node/cni/conf-versions/${v2?.id}/diff`);
    expect(diff.from.id).toBe(v1?.id);
    expect(diff.diff).toMatch(/^--- .*10-net\.conflist \(version \d+, /);
    expect(diff.diff).toMatch(/^-\s+"subnet": "10\.9\.0\.0\/24"$/m);
    expect(diff.diff).toMatch(/^\+\s+"subnet": "10\.300\.0\.0\/24"$/m);

    // The finding names the change and the diff to look at.
    createConfigFailureDetector(t.db).detect(Date.now());
    const [f] = createFindingsReader(t.db).listFindings({ kind: 'config-changed-before-failures' });
    expect(f?.message).toMatch(new RegExp(`ADD on network "net" failed 2 times and has not succeeded since ${confPath()} changed \\(version ${v1?.id} → ${v2?.id}\\)`));
    expect(f?.message).toContain(`cnirec config diff ${v1?.id} ${v2?.id}`);
    expect(f?.message).toContain('invalid CIDR address: 10.300.0.0/24');
    expect(f).toMatchObject({ path: confPath(), network: 'net', callId: failed[1]?.id });

    // An ADD that succeeds again resolves it.
    t.store.writeEvents([finished(add(V2_MS + 180_000))]);
    createConfigFailureDetector(t.db).detect(Date.now());
    expect(createFindingsReader(t.db).listFindings({ kind: 'config-changed-before-failures' })).toEqual([]);
  });

  it('hashes each version of a plugin binary once and shows what its VERSION probe reported', async () => {
    const plugin = join(dir, 'bin', 'bridge');
    const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');
    const probe = makeCall({ command: 'VERSION', path: plugin, plugin: 'bridge', stdout: stream('{"cniVersion":"1.0.0","supportedVersions":["0.4.0","1.0.0"]}') });
    const events = (c: CniCall): CollectorEvent[] => [{ type: 'call.started', call: c }, { type: 'call.finished', call: c }];
    t.store.writeEvents([finished(probe)]);
    wiring.callListener.onEvents(events(probe));
    type Binaries = { items: { sha256: string; calls: number; reported: { supportedVersions: string[] } | null; inode: number }[] };
    const first = await until('the binary', async () => (await get<Binaries>(`/api/v1/node/cni/binaries?path=${encodeURIComponent(plugin)}`)).items[0]);
    const firstItem = first;
    expect(firstItem).toMatchObject({ sha256: sha(plugin), calls: 1, reported: { supportedVersions: ['0.4.0', '1.0.0'] } });

    // An upgrade: another file at the same path is another version, seen by the next call.
    copyFileSync('/bin/false', `${plugin}.new`);
    chmodSync(`${plugin}.new`, 0o755);
    renameSync(`${plugin}.new`, plugin);
    const next = makeCall({ command: 'ADD', path: plugin, plugin: 'bridge', at: 5_000 });
    t.store.writeEvents([finished(next)]);
    wiring.callListener.onEvents(events(next));
    const both = await until('the second version', async () => {
      const b = await get<Binaries>(`/api/v1/node/cni/binaries?path=${encodeURIComponent(plugin)}`);
      return b.items.length === 2 ? b.items : null;
    });
    expect(both.map((b) => b.sha256)).toEqual([sha(plugin), firstItem.sha256]);
    expect((await get<{ binary: { sha256: string } }>(`/api/v1/calls/${next.id}/setup`)).binary.sha256).toBe(sha(plugin));
  });

  it('lists what a GC should free against host-local reservations, and what stayed reserved after it', () => {
    const cache = createCacheStore(t.db, { sinceMs: 0 });
    const at = Date.now() - 120_000;
    const reservation = (ip: string, containerId: string) => ({
      type: 'ip.allocated' as const,
      atMs: at,
      allocation: { path: `/var/lib/cni/networks/net/${ip}`, dir: '/var/lib/cni/networks', network: 'net', ip, containerId, ifName: 'eth0', mtimeMs: at },
    });
    cache.writeCacheEvents([reservation('10.9.0.5', 'ctr-gone'), reservation('10.9.0.6', 'ctr-live')]);
    const gcCall = makeCall({
      command: 'GC',
      containerId: null,
      noPod: true,
      startedAtUs: (at + 30_000) * 1000,
      stdin: stream(JSON.stringify({ cniVersion: '1.1.0', name: 'net', type: 'host-local', 'cni.dev/valid-attachments': [{ containerID: 'ctr-live', ifname: 'eth0' }] })),
      stdout: stream(),
    });
    t.store.writeEvents([finished(gcCall)]);
    const gc = createGcChecks(t.db);
    const a = gc.analyse(gcCall.id, Date.now());
    expect(a?.validAttachments).toEqual([{ containerId: 'ctr-live', ifName: 'eth0' }]);
    expect(a?.shouldFree).toEqual([{ containerId: 'ctr-gone', ifName: 'eth0', ip: '10.9.0.5', source: 'host-local', path: '/var/lib/cni/networks/net/10.9.0.5', held: true }]);
    gc.detect(Date.now());
    const [f] = createFindingsReader(t.db).listFindings({ kind: 'gc-leftover' });
    expect(f?.message).toMatch(/host-local still holds 10\.9\.0\.5 on network "net" for container ctr-gone \(eth0\), which the GC at .* did not list as a valid attachment/);
    expect(f).toMatchObject({ ip: '10.9.0.5', callId: gcCall.id });
  });

  it('stores a conf file with its secrets redacted, never the original bytes', async () => {
    const secret = join(dir, 'conf', '50-etcd.conflist');
    writeFileSync(secret, JSON.stringify({ cniVersion: '1.0.0', name: 'etcd-net', plugins: [{ type: 'bridge', etcd_key: 'PRIVATE-KEY-BYTES', etcd_key_file: '/etc/etcd/key.pem' }] }));
    type Versions = { items: { id: number; redactedPointers: string[]; network: string }[] };
    const [v] = await until('the version', async () => {
      const r = await get<Versions>(`/api/v1/node/cni/conf-versions?path=${encodeURIComponent(secret)}`);
      return r.items.length > 0 ? r.items : null;
    });
    expect(v).toMatchObject({ network: 'etcd-net', redactedPointers: ['/plugins/0/etcd_key'] });
    const full = await get<{ text: string }>(`/api/v1/node/cni/conf-versions/${v?.id}`);
    expect(full.text).toContain('"etcd_key":"[redacted]"');
    expect(full.text).toContain('/etc/etcd/key.pem');
    // Nowhere in the database file or its WAL.
    for (const f of [t.db.name, `${t.db.name}-wal`]) if (existsSync(f)) expect(readFileSync(f).toString('latin1')).not.toContain('PRIVATE-KEY-BYTES');
    rmSync(secret);
  });

  it('answers the doctor report for the conf dir it follows', async () => {
    const r = await get<{ views: { confDir: string; active: { file: string } | null; files: { plugins: { path: string | null }[] }[] }[]; watchedConfDirs: string[] }>('/api/v1/node/cni');
    expect(r.watchedConfDirs).toEqual([join(dir, 'conf')]);
    const view = r.views.find((v) => v.confDir === join(dir, 'conf'));
    expect(view?.active?.file).toBe('10-net.conflist');
    expect(view?.files[0]?.plugins.map((p) => p.path)).toEqual([join(dir, 'bin', 'bridge'), join(dir, 'bin', 'host-local')]);
  });
});

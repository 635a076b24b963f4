/**
 * `cnirec bundle` and `cnirec open` against a recording daemon (real bpftrace, the reference bridge plugin
 * with host-local in a network namespace, a shell plugin with a helper): bundles of a window, a pod and a
 * call hold exactly those calls; opened, they tell the same pod story and call detail as the live daemon,
 * over REST and through the CLI; bundles taken while 300 calls are being written are consistent snapshots;
 * and with the daemon stopped, the bundle made from its database alone holds the same record.
 */

import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBundle, type BundleManifest } from '../../daemon/index.js';
import { startDaemon, type RunningDaemon } from './support/daemon.js';
import { openBundle } from './support/open-bundle.js';
import { ECHO, FIXTURE_PLUGINS } from './support/faults.js';
import { configBytes, createTestBridgeNetwork, withNetns, type Netns, type TestBridgeNetwork } from './support/netns.js';
import { CNI_BIN_DIR, execPlugin, podCniArgs } from './support/plugin-driver.js';
import { requirePrivilegedSuite } from './support/privileged.js';

const canRun = requirePrivilegedSuite();
const CLI = path.resolve(import.meta.dirname, '../../bin/cnirec.js');
const ENV = { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin' };

function cli(args: string[], env: NodeJS.ProcessEnv = ENV): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) =>
    execFile(process.execPath, [CLI, ...args], { env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
      err ? reject(new Error(`cnirec ${args.join(' ')}: ${err.message}\n${stderr}`)) : resolve({ stdout, stderr }),
    ),
  );
}

/** The record of a bundle, taken apart as `cnirec open` does (checked against its manifest). */
async function recordOf(file: string): Promise<{ db: BetterSqlite3.Database; manifest: BundleManifest; close(): Promise<void> }> {
  const opened = await readBundle(file);
  const db = new BetterSqlite3(opened.recordFile, { readonly: true });
  return { db, manifest: opened.manifest, close: async () => (db.close(), await opened.cleanup()) };
}

const callIds = (db: BetterSqlite3.Database, where = '1') => (db.prepare(`SELECT id FROM calls WHERE ${where} ORDER BY id`).all() as { id: string }[]).map((r) => r.id);

describe.runIf(canRun)('bundles of a recording daemon, opened elsewhere', () => {
  let scratch: string;
  let dbPath: string;
  let daemon: RunningDaemon;
  let net: TestBridgeNetwork;
  let netns: Netns;
  const ns = `bundle-${Date.now().toString(36)}`;
  const cid = (name: string) => `${ns}-${name}-0123456789abcdef`;
  let since: string;
  let until: string;
  const window = () => ['--since', since, '--until', until];
  const file = (name: string) => path.join(scratch, name);

  beforeAll(async () => {
    scratch = mkdtempSync(path.join(tmpdir(), 'cnirec-e2e-bundle-'));
    dbPath = path.join(scratch, 'db', 'cnirec.db');
    [daemon, net, netns] = await Promise.all([startDaemon({ dbPath }), createTestBridgeNetwork('cnirec-bdl'), withNetns('cnirec-bdl')]);
    since = new Date(Date.now() - 1000).toISOString();
    const bridge = (pod: string, container: string, command: string, config: object) =>
      execPlugin({ plugin: `${CNI_BIN_DIR}/bridge`, command, containerId: container, netns: netns.path, ifname: 'eth0', cniArgs: podCniArgs(ns, pod, `uid-${pod}`, container), stdin: configBytes(config) });
    expect((await bridge('web-0', cid('web'), 'ADD', net.config)).exitCode).toBe(0);
    expect((await bridge('web-0', cid('web'), 'DEL', net.config)).exitCode).toBe(0);
    expect((await bridge('web-1', cid('bad'), 'ADD', { ...net.config, ipam: { type: 'no-such-ipam' } })).exitCode).not.toBe(0);
    await execPlugin({ plugin: ECHO, cniPath: FIXTURE_PLUGINS, command: 'ADD', containerId: cid('echo'), netns: '/var/run/netns/none', ifname: 'eth0', cniArgs: podCniArgs(ns, 'echo-0', 'uid-echo', cid('echo')), stdin: '{"cniVersion":"1.0.0","name":"e","type":"echo"}' });
    await daemon.waitFor('the calls stored', (store) => (store.listCalls({ namespace: ns, status: 'finished' }, 100).items.length >= 6 ? true : null), 30_000);
    until = new Date(Date.now() + 1000).toISOString();
  }, 180_000);

  afterAll(async () => {
    await netns?.remove();
    await net?.cleanup();
    await daemon?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  const liveIds = (filter: Parameters<RunningDaemon['store']['listCalls']>[0]) =>
    daemon.store
      .listCalls({ ...filter, includeVersion: true }, 1000)
      .items.map((c) => c.id)
      .sort();

  it('holds the window, a pod (with what its calls delegated) or a call (its whole tree), with the daemon\'s health and log', async () => {
    await cli(['bundle', '--api', daemon.url, ...window(), '-o', file('all.tar.gz')]);
    const all = await recordOf(file('all.tar.gz'));
    expect(callIds(all.db, `pod_namespace = '${ns}'`)).toEqual(liveIds({ namespace: ns }));
    expect(all.manifest).toMatchObject({ daemon: { answered: true }, payloads: { kept: 'all' } });
    expect(all.manifest.files.map((f) => f.path)).toEqual(expect.arrayContaining(['daemon/health.json', 'daemon/settings.json', 'daemon/log.jsonl', 'daemon/metrics.txt', 'node/doctor.json']));
    expect(all.db.pragma('integrity_check', { simple: true })).toBe('ok');
    await all.close();

    await cli(['bundle', '--api', daemon.url, ...window(), '--pod', `${ns}/web-0`, '-o', file('pod.tar.gz')]);
    const pod = await recordOf(file('pod.tar.gz'));
    expect(callIds(pod.db)).toEqual(liveIds({ namespace: ns, pod: 'web-0' }));
    expect(callIds(pod.db).length).toBeGreaterThanOrEqual(4); // ADD and DEL of bridge, each with host-local
    await pod.close();

    const ipam = daemon.store.listCalls({ namespace: ns, pod: 'web-0', plugin: 'host-local', command: 'ADD' }, 10).items[0]!;
    const add = daemon.store.getCall(ipam.parentId!)!;
    await cli(['bundle', '--api', daemon.url, '--call', ipam.id, '-o', file('call.tar.gz')]);
    const call = await recordOf(file('call.tar.gz'));
    expect(callIds(call.db)).toEqual([add.id, ipam.id].sort());
    expect(call.manifest.filters.calls).toEqual([ipam.id]);
    await call.close();
  });

  it('opens to the same pod story and call detail as the live daemon, over REST and through the CLI', async () => {
    const opened = await openBundle(file('all.tar.gz'));
    try {
      const add = daemon.store.listCalls({ namespace: ns, pod: 'web-0', plugin: 'bridge', command: 'ADD' }, 10).items[0]!;
      const failed = daemon.store.listCalls({ namespace: ns, pod: 'web-1', command: 'ADD' }, 10).items[0]!;
      for (const route of [`/api/v1/pods/${ns}/web-0`, `/api/v1/pods/${ns}/web-1`, `/api/v1/calls/${add.id}`, `/api/v1/calls/${failed.id}`, `/api/v1/calls/${add.id}/replay`]) {
        const [live, bundled] = await Promise.all([fetch(`${daemon.url}${route}`), fetch(`${opened.url}${route}`)]);
        expect(bundled.status, route).toBe(200);
        expect(bundled.headers.get('cnirec-bundle'), route).toMatch(/^node=[^;]+; taken-at=\d{4}-/);
        expect(await bundled.text(), route).toBe(await live.text());
      }
      for (const args of [['pod', `${ns}/web-0`, '-o', 'json'], ['show', add.id, '-o', 'json'], ['calls', '--namespace', ns, '-o', 'json']]) {
        const [live, bundled] = await Promise.all([cli([...args, '--api', daemon.url]), cli([...args, '--api', opened.url])]);
        expect(bundled.stdout, args.join(' ')).toBe(live.stdout);
        expect(bundled.stderr).toMatch(/reading a bundle of node .* taken at .* \(cnirec open\), not a live node/);
      }
      // Nothing live: the capture mode does not switch.
      await expect(cli(['capture', 'full', '--api', opened.url])).rejects.toThrow(/a bundle opened with `cnirec open`: nothing records here/);
    } finally {
      await opened.stop();
    }
  });

  it('takes consistent snapshots while 300 calls are being written', async () => {
    let done = false;
    const writer = (async () => {
      for (let batch = 0; batch < 50; batch++) {
        await Promise.all(
          Array.from({ length: 6 }, (_, i) =>
            execPlugin({ plugin: ECHO, cniPath: FIXTURE_PLUGINS, command: 'ADD', containerId: cid(`load-${batch}-${i}`), netns: '/var/run/netns/none', ifname: 'eth0', cniArgs: podCniArgs(ns, `load-${batch}`, `uid-load-${batch}`, cid(`load-${batch}-${i}`)), stdin: `{"cniVersion":"1.0.0","name":"load","type":"echo","n":${batch * 6 + i}}` }),
          ),
        );
      }
      done = true;
    })();
    const snapshots: string[] = [];
    while (!done || snapshots.length < 2) {
      const f = file(`busy-${snapshots.length}.tar.gz`);
      await cli(['bundle', '--api', daemon.url, '--since', since, '-o', f]);
      snapshots.push(f);
      if (snapshots.length >= 6) break;
    }
    await writer;
    await daemon.waitFor('the 300 calls stored', (store) => (store.listCalls({ namespace: ns, plugin: 'echo.sh', status: 'finished' }, 1000).items.length >= 301 ? true : null), 60_000);
    let previous = 0;
    const counts: number[] = [];
    for (const f of snapshots) {
      const r = await recordOf(f);
      try {
        expect(r.db.pragma('integrity_check', { simple: true }), f).toBe('ok');
        expect(r.db.pragma('foreign_key_check')).toEqual([]);
        // A finished call and its helpers are written in one transaction: a snapshot has both or neither.
        const finished = r.db.prepare(`SELECT id FROM calls WHERE plugin = 'echo.sh' AND status = 'finished' AND pod_namespace = ?`).all(ns) as { id: string }[];
        for (const { id } of finished) {
          const inBundle = (r.db.prepare('SELECT count(*) AS n FROM helpers WHERE call_id = ?').get(id) as { n: number }).n;
          expect(inBundle, id).toBe(daemon.store.getCall(id)!.helpers.length);
        }
        const orphans = r.db.prepare('SELECT count(*) AS n FROM helpers WHERE call_id NOT IN (SELECT id FROM calls)').get() as { n: number };
        expect(orphans.n).toBe(0);
        expect(finished.length).toBeGreaterThanOrEqual(previous);
        previous = finished.length;
        counts.push(finished.length);
      } finally {
        await r.close();
      }
    }
    expect(snapshots.length).toBeGreaterThanOrEqual(2);
    // The first was taken in the middle of the writes (the CLI alone takes longer to start than a batch to run).
    expect(counts[0]!, counts.join(', ')).toBeLessThan(301);
  }, 180_000);

  it('makes the same record from the database alone once the daemon is stopped, and leaves the file as it was', async () => {
    const url = daemon.url;
    expect((await daemon.stop()).code).toBe(0);
    const sha = () => createHash('sha256').update(readFileSync(dbPath)).digest('hex');
    const before = sha();
    const { stderr } = await cli(['bundle', '--api', url, ...window(), '-o', file('down.tar.gz')], { ...ENV, CNIREC_DB: dbPath });
    expect(stderr).toContain(`no daemon answers at ${url}: making the bundle from its database alone`);
    expect(sha()).toBe(before);
    const [down, up] = await Promise.all([recordOf(file('down.tar.gz')), recordOf(file('all.tar.gz'))]);
    try {
      expect(down.manifest.daemon.answered).toBe(false);
      const rows = (db: BetterSqlite3.Database) => db.prepare(`SELECT id, status, exit_code, stdin, stdout FROM calls WHERE pod_namespace = ? AND plugin <> 'echo.sh' ORDER BY id`).all(ns);
      expect(rows(down.db)).toEqual(rows(up.db));
    } finally {
      await Promise.all([down.close(), up.close()]);
    }
  });
});

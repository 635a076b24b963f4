/**
 * CNI 1.1 STATUS and GC with real bpftrace and the real daemon in its default
 * capture mode (auto). A 1.1.0 plugin of our own (a shell script in a temp
 * CNI_PATH dir, listed by a conflist in a conf dir the daemon follows) is run
 * as libcni runs STATUS and GC: CNI_CONTAINERID, CNI_NETNS, CNI_IFNAME and
 * CNI_ARGS empty, the network's config (with its name) on stdin.
 *
 * 1,000 healthy heartbeats must add less than 200 KiB to the closed
 * database; then the plugin answers code 50 with a message (the first
 * failures in light mode, without it), which opens `network-not-ready` with
 * the message once a heartbeat is captured with payloads; then it recovers,
 * which resolves the finding. What people see is checked where they see it:
 * the readiness timeline, the default call list, `network` on STATUS and GC
 * calls (and the DEL a GC ran first, marked), /metrics, the tail and the web
 * view's status page in Chromium.
 */

import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { browserProblem, launchChromium, openPage } from './support/browser.js';
import { startDaemon, type RunningDaemon } from './support/daemon.js';
import Database from 'better-sqlite3';
import { execPlugin } from './support/plugin-driver.js';
import { requirePrivilegedSuite } from './support/privileged.js';
import { SYSTEM_PATH } from './support/proc.js';

const canRun = requirePrivilegedSuite();
const ROOT = path.resolve(import.meta.dirname, '../..');

const NETWORK = 'hbnet';
const PLUGIN = 'hb-ready';
const FAIL_MSG = 'datapath agent not running: cilium-agent socket missing';
/** Heartbeats run at once: fast, without making any one of them slow (over --capture-slow). */
const BATCH = 10;
const HEARTBEATS = 1000;

/**
 * The plugin: STATUS answers from a flag file (exit 50 and a CNI error on stdout while it exists), GC and
 * DEL succeed, VERSION reports 1.1.0. Shell builtins only (no helper processes): stdin is read with `read`.
 */
const pluginScript = (flagFile: string) => `#!/bin/sh
while IFS= read -r line || [ -n "$line" ]; do :; done
case "$CNI_COMMAND" in
  STATUS)
    if [ -e ${flagFile} ]; then
      printf '{"cniVersion":"1.1.0","code":50,"msg":"${FAIL_MSG}"}'
      exit 50
    fi
    exit 0 ;;
  VERSION) printf '{"cniVersion":"1.1.0","supportedVersions":["1.0.0","1.1.0"]}' ;;
  *) exit 0 ;;
esac
`;

interface Readiness {
  network: string | null;
  ready: boolean | null;
  plugin: string | null;
  error: { code: number | null; msg: string | null } | null;
  checks: number;
  latency: { p50Ms: number | null; p99Ms: number | null; maxMs: number | null };
  transitions: { at: string; ready: boolean; plugin: string; code: number | null; msg: string | null; callId: string | null }[];
}
interface Summary {
  id: string;
  command: string;
  plugin: string;
  ok: boolean | null;
  network: string | null;
  gcDriven: boolean;
  containerId: string | null;
  captureMode: string;
  durationMs: number | null;
}
/** Slower than --capture-slow (3 s): kept whole by design (a loaded machine can make one so). */
const SLOW_MS = 3000;
const notSlow = (c: Summary) => c.durationMs !== null && c.durationMs <= SLOW_MS;
interface FindingView {
  kind: string;
  severity: string;
  subject: string;
  message: string;
  network: string | null;
  count: number | null;
  resolvedAt: string | null;
}

describe.runIf(canRun)('CNI STATUS heartbeats and GC, as libcni runs them', () => {
  let work: string;
  let binDir: string;
  let confDir: string;
  let flag: string;
  let dbPath: string;
  let daemon: RunningDaemon | null = null;
  let browser: Browser | null = null;
  const config = Buffer.from(JSON.stringify({ cniVersion: '1.1.0', name: NETWORK, type: PLUGIN }));

  const start = async () => {
    await stop();
    daemon = await startDaemon({ capture: 'auto', dbPath, extraArgs: ['--cni-conf-dir', confDir, '--cni-bin-dir', binDir, '--cache-rescan-ms', '1000'] });
    // As on a node, the network's conf is there before its heartbeats: the daemon has read it.
    await poll('the conf file recorded', async () => (await get<{ items: { network: string | null }[] }>('/api/v1/node/cni/conf-versions')).items.some((v) => v.network === NETWORK));
    return daemon;
  };
  const stop = async () => {
    await daemon?.stop();
    daemon = null;
  };
  const d = () => {
    if (!daemon) throw new Error('no daemon');
    return daemon;
  };
  const get = async <T>(route: string): Promise<T> => {
    const res = await fetch(`${d().url}${route}`);
    if (!res.ok) throw new Error(`${route}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const poll = async <T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 30_000): Promise<T> => {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const v = await probe();
      if (v) return v;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}\n${d().logs().slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  /** libcni's STATUS and GC: no container, netns, interface or args; the network's config on stdin. */
  const run = (command: 'STATUS' | 'GC' | 'DEL', stdin: Buffer = config, containerId = '') =>
    execPlugin({ plugin: path.join(binDir, PLUGIN), command, containerId, netns: command === 'DEL' ? '/var/run/netns/gone' : '', ifname: command === 'DEL' ? 'eth0' : '', cniPath: binDir, stdin });
  const heartbeats = async (n: number) => {
    for (let done = 0; done < n; done += BATCH) {
      const results = await Promise.all(Array.from({ length: Math.min(BATCH, n - done) }, () => run('STATUS')));
      for (const r of results) expect(r.exitCode).toBe(0);
    }
  };
  const hbnet = async () => (await get<{ items: Readiness[] }>('/api/v1/node/cni/status')).items.find((n) => n.network === NETWORK);
  const waitChecks = (n: number) => poll(`${n} STATUS checks of ${NETWORK}`, async () => ((await hbnet())?.checks ?? 0) >= n && hbnet(), 60_000);
  /** `cnirec doctor` as a person runs it on the node, the daemon answering. */
  const doctor = () =>
    new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const child = spawn(process.execPath, [path.join(ROOT, 'bin/cnirec.js'), 'doctor', '--cni-conf-dir', confDir, '--cni-bin-dir', binDir], { env: { PATH: SYSTEM_PATH, CNIREC_API: d().url } });
      let stdout = '';
      child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
      child.on('exit', (code) => resolve({ code, stdout }));
    });
  const closedSize = () => statSync(dbPath).size;
  /** Bytes of the closed file's pages in use (the file less its free pages). */
  const usedBytes = () => {
    const db = new Database(dbPath, { readonly: true });
    try {
      const pages = (db.pragma('page_count', { simple: true }) as number) - (db.pragma('freelist_count', { simple: true }) as number);
      return pages * (db.pragma('page_size', { simple: true }) as number);
    } finally {
      db.close();
    }
  };

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'cnirec-e2e-status-'));
    binDir = path.join(work, 'bin');
    confDir = path.join(work, 'net.d');
    flag = path.join(work, 'not-ready');
    dbPath = path.join(work, 'db', 'cnirec.db');
    for (const dir of [binDir, confDir, path.dirname(dbPath)]) mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(binDir, PLUGIN), pluginScript(flag));
    chmodSync(path.join(binDir, PLUGIN), 0o755);
    writeFileSync(path.join(confDir, '10-hbnet.conflist'), JSON.stringify({ cniVersion: '1.1.0', name: NETWORK, plugins: [{ type: PLUGIN }] }, null, 2));
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    await stop();
    if (work) rmSync(work, { recursive: true, force: true });
  }, 60_000);

  it('keeps 1,000 healthy heartbeats as readiness, adding under 200 KiB to the closed database', async () => {
    await start();
    // The network's first answer is kept whole (a transition); then the file is measured closed.
    await heartbeats(1);
    await waitChecks(1);
    await stop();
    const before = closedSize();
    const usedBefore = usedBytes();

    await start();
    const t0 = Date.now();
    await heartbeats(HEARTBEATS);
    const n = await waitChecks(HEARTBEATS + 1);
    const took = Date.now() - t0;
    expect(n.ready).toBe(true);
    expect(n.checks).toBe(HEARTBEATS + 1);
    expect(n.latency.maxMs).toBeGreaterThan(0);
    expect(n.latency.p50Ms).not.toBeNull();
    // Only the first answer became a transition; no heartbeat since was stored as a call.
    expect(n.transitions.map((t) => t.ready)).toEqual([true]);
    const status = await get<{ items: Summary[] }>('/api/v1/calls?command=STATUS&limit=1000');
    expect(status.items.filter(notSlow).length).toBe(1);
    expect(status.items.at(-1)).toMatchObject({ command: 'STATUS', plugin: PLUGIN, ok: true, network: NETWORK });
    // Healthy heartbeats are left out of the default list (like VERSION probes).
    expect((await get<{ items: Summary[] }>('/api/v1/calls?limit=1000')).items.filter((c) => c.command === 'STATUS')).toEqual([]);
    // Metrics: the network is ready and every check is in the latency histogram.
    const metrics = await (await fetch(`${d().url}/metrics`)).text();
    expect(metrics).toContain(`cnirec_cni_network_ready{network="${NETWORK}"} 1`);
    expect(metrics).toMatch(new RegExp(`cnirec_cni_status_duration_seconds_count\\{network="${NETWORK}",ok="true"\\} ${HEARTBEATS}\\b`));
    await stop();
    const growth = closedSize() - before;
    const usedGrowth = usedBytes() - usedBefore;
    console.log(`1,000 healthy STATUS heartbeats: +${growth} bytes to the closed database file (${before} → ${closedSize()}), +${usedGrowth} bytes of pages in use; run in ${took} ms`);
    expect(growth).toBeLessThan(200 * 1024);
    expect(usedGrowth).toBeLessThan(200 * 1024);
  }, 300_000);

  it('opens network-not-ready with the code and message (filled in once payloads are on), shows the timeline, and resolves it on recovery', async () => {
    await start();
    const tail = new WebSocket(`${d().url.replace('http', 'ws')}/api/v1/tail`);
    const readinessMessages: { readiness: Readiness }[] = [];
    tail.on('message', (data: Buffer) => {
      const m = JSON.parse(data.toString()) as { type: string; readiness: Readiness };
      if (m.type === 'network.readiness') readinessMessages.push(m);
    });
    await new Promise((r) => tail.once('open', r));

    writeFileSync(flag, '');
    // The first failure comes in light mode (no stdout captured): auto turns payloads on; heartbeats go on until one carries the message.
    const first = await run('STATUS');
    expect(first.exitCode).toBe(50);
    expect(JSON.parse(first.stdout.toString())).toMatchObject({ code: 50, msg: FAIL_MSG });
    const down = await poll('the not-ready readiness', async () => {
      const n = await hbnet();
      return n?.ready === false && n;
    });
    expect(down.plugin).toBe(PLUGIN);
    const firstFailure = (await get<{ items: Summary[] }>('/api/v1/calls?command=STATUS&failed=true')).items.at(-1)!;
    expect(firstFailure).toMatchObject({ ok: false, network: NETWORK, captureMode: 'light' });

    const withMessage = await poll(
      'a heartbeat captured with payloads',
      async () => {
        const r = await run('STATUS');
        expect(r.exitCode).toBe(50);
        const n = await hbnet();
        return n?.error?.msg === FAIL_MSG && n;
      },
      90_000,
    );
    expect(withMessage.error).toEqual({ code: 50, msg: FAIL_MSG, details: null });
    // The transition to not ready got the message too, though its own call had no payloads.
    expect(withMessage.transitions[0]).toMatchObject({ ready: false, plugin: PLUGIN, code: 50, msg: FAIL_MSG, callId: firstFailure.id });

    const finding = await poll('the network-not-ready finding with its message', async () => {
      const f = (await get<{ items: FindingView[] }>('/api/v1/findings?kind=network-not-ready')).items.find((x) => x.network === NETWORK);
      return f?.message.includes(FAIL_MSG) && f;
    });
    expect(finding).toMatchObject({ severity: 'critical', subject: NETWORK, resolvedAt: null });
    expect(finding.message).toContain('error 50 (plugin not available)');
    expect(finding.count).toBeGreaterThanOrEqual(2);
    // Failing heartbeats are listed by default; /metrics says not ready.
    expect((await get<{ items: Summary[] }>('/api/v1/calls?limit=1000')).items.filter((c) => c.command === 'STATUS' && c.ok === false).length).toBeGreaterThanOrEqual(2);
    expect(await (await fetch(`${d().url}/metrics`)).text()).toContain(`cnirec_cni_network_ready{network="${NETWORK}"} 0`);
    // The doctor gives a daemon 3 s to answer: on a loaded machine, ask again.
    const sick = await poll('cnirec doctor with readiness', async () => {
      const r = await doctor();
      return r.stdout.includes('readiness (CNI STATUS)') && r;
    });
    expect(sick.stdout).toContain(`"${NETWORK}" not ready since`);
    expect(sick.stdout).toContain(`${PLUGIN} answers error 50: ${FAIL_MSG}: the runtime reports the node NotReady`);
    expect(sick.code).toBe(1);

    // GC as libcni runs it, with payloads on: first a DEL of a cached attachment missing from the valid ones, then GC.
    const del = await run('DEL', config, 'cafe0000gone');
    const gc = await run('GC', Buffer.from(JSON.stringify({ cniVersion: '1.1.0', name: NETWORK, type: PLUGIN, 'cni.dev/valid-attachments': [{ containerID: 'cafe0000kept', ifname: 'eth0' }] })));
    expect([del.exitCode, gc.exitCode]).toEqual([0, 0]);

    rmSync(flag);
    await heartbeats(1);
    const up = await poll('readiness again', async () => {
      const n = await hbnet();
      return n?.ready === true && n;
    });
    expect(up.transitions.map((t) => t.ready)).toEqual([true, false, true]);
    expect(up.error).toBeNull();
    const resolved = await poll('the finding resolved', async () => {
      const f = (await get<{ items: FindingView[] }>('/api/v1/findings?kind=network-not-ready&includeResolved=true')).items.find((x) => x.network === NETWORK);
      return f?.resolvedAt ? f : null;
    });
    expect(resolved.message).toContain(FAIL_MSG);
    const well = await poll('cnirec doctor with readiness', async () => {
      const r = await doctor();
      return r.stdout.includes('readiness (CNI STATUS)') && r;
    });
    expect(well.stdout).toContain(`"${NETWORK}" ready since`);
    expect(well.stdout).not.toContain('not ready');
    // The tail said so as it happened: not ready (then its message), ready.
    await poll('the tail messages', async () => readinessMessages.some((m) => m.readiness.ready === true) && true);
    expect(readinessMessages.map((m) => m.readiness.ready)).toEqual(expect.arrayContaining([false, true]));
    expect(readinessMessages.some((m) => m.readiness.error?.msg === FAIL_MSG)).toBe(true);
    tail.close();

    // command=STATUS lists what was kept: the first answer, the failures, the first answer after them.
    const kept = (await get<{ items: Summary[] }>('/api/v1/calls?command=STATUS&limit=1000')).items;
    expect(kept.filter((c) => c.ok === true && notSlow(c)).length).toBe(2);
    expect(kept.every((c) => c.network === NETWORK)).toBe(true);

    // GC and the DEL it ran first are named by their network; the DEL is marked.
    const gcCall = await poll('the GC call', async () => (await get<{ items: Summary[] }>(`/api/v1/calls?command=GC&network=${NETWORK}`)).items[0]);
    expect(gcCall).toMatchObject({ plugin: PLUGIN, network: NETWORK, gcDriven: false });
    const delCall = (await get<{ items: Summary[] }>('/api/v1/calls?command=DEL&containerId=cafe0000gone')).items[0];
    expect(delCall).toMatchObject({ network: NETWORK, gcDriven: true });
    const detail = await get<Summary>(`/api/v1/calls/${gcCall.id}`);
    expect(detail.network).toBe(NETWORK);
  }, 300_000);

  it('shows readiness and its timeline on the web view’s status page', async () => {
    const problem = browserProblem();
    if (problem) throw new Error(problem);
    browser = await launchChromium();
    const { page, problems, close } = await openPage(browser);
    await page.goto(`${d().url}/ui/status`);
    const section = page.locator(`.network-readiness[data-network="${NETWORK}"]`);
    await section.waitFor();
    expect(await section.getAttribute('data-ready')).toBe('true');
    const text = await section.innerText();
    expect(text).toContain('ready');
    expect(text).toContain(FAIL_MSG);
    expect(await section.locator('.transitions tbody tr').count()).toBe(3);
    expect(problems).toEqual([]);
    await close();
  }, 120_000);
});

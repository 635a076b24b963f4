/**
 * The node's CNI setup with real files, real plugins, podman on its CNI
 * backend and the real daemon: podman's containers.conf (CONTAINERS_CONF)
 * names a conf dir and a bin dir of our own, which `cnirec doctor` finds by
 * itself and the daemon follows. Each problem the doctor must name is its
 * own case, set up in those directories and undone after; a conf change
 * between two podman runs is stored, linked and diffed, and opens the
 * "config changed before failures" finding; a GC call is compared with
 * host-local's reservations.
 */

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WebSocket } from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from './support/daemon.js';
import { execPlugin } from './support/plugin-driver.js';
import { createPodmanEnv, type PodmanEnv } from './support/podman.js';
import { requirePrivilegedSuite } from './support/privileged.js';
import { SYSTEM_PATH } from './support/proc.js';

const canRun = requirePrivilegedSuite();
const ROOT = path.resolve(import.meta.dirname, '../..');
const ECHO_PLUGIN = path.resolve(import.meta.dirname, 'fixtures/plugins/echo.sh');

interface DoctorJson {
  ok: boolean;
  problems: { code: string; severity: string; message: string }[];
  views: { readBy: string; confDir: string; binDirs: string[]; active: { file: string; network: string } | null }[];
}

describe.runIf(canRun)('the node CNI setup, with podman and the daemon', () => {
  let pm: PodmanEnv;
  let daemon: RunningDaemon;
  let bin: string;
  let ipam: string;
  let original: string;
  let confDir: string;
  let conflist: string;

  const env = () => ({ PATH: SYSTEM_PATH, CONTAINERS_CONF: pm.confPath, CNIREC_API: daemon.url });
  /** Runs `cnirec doctor` as a person would (it finds the dirs in podman's containers.conf). */
  const doctor = (...args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [path.join(ROOT, 'bin/cnirec.js'), 'doctor', ...args], { env: env() });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
      child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      child.on('exit', (code) => resolve({ code, stdout, stderr }));
    });
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
  const edit = (change: (conf: { cniVersion: string; name: string; plugins: Record<string, unknown>[] }) => void) => {
    const conf = JSON.parse(original) as { cniVersion: string; name: string; plugins: Record<string, unknown>[] };
    change(conf);
    writeFileSync(conflist, `${JSON.stringify(conf, null, 2)}\n`);
  };
  /** The problem lines of a doctor run that must fail. */
  const problems = async () => {
    const r = await doctor('--json');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(1);
    return (JSON.parse(r.stdout) as DoctorJson).problems;
  };

  beforeAll(async () => {
    // A bin dir of our own with the reference plugins, so one can be broken without touching /usr/lib/cni.
    bin = mkdtempSync(path.join(tmpdir(), 'cnirec-e2e-bin-'));
    for (const p of readdirSync('/usr/lib/cni')) copyFileSync(path.join('/usr/lib/cni', p), path.join(bin, p));
    for (const p of readdirSync(bin)) chmodSync(path.join(bin, p), 0o755);
    ipam = mkdtempSync(path.join(tmpdir(), 'cnirec-e2e-gc-ipam-'));
    pm = await createPodmanEnv({ networkPrefix: 'cnirec-doc', cniPluginDirs: [bin] });
    confDir = pm.networkConfigDir;
    conflist = pm.network.conflistPath;
    original = readFileSync(conflist, 'utf8');
    daemon = await startDaemon({
      extraArgs: ['--cni-conf-dir', confDir, '--cni-bin-dir', bin, '--host-local-dirs', ipam, '--cache-rescan-ms', '1000'],
      env: { CONTAINERS_CONF: pm.confPath },
    });
  }, 240_000);

  afterAll(async () => {
    await daemon?.stop();
    await pm?.cleanup();
    for (const d of [bin, ipam]) if (d) rmSync(d, { recursive: true, force: true });
  }, 120_000);

  afterEach(() => {
    // Every case starts from the working setup.
    for (const f of readdirSync(confDir)) if (path.join(confDir, f) !== conflist) rmSync(path.join(confDir, f), { force: true });
    writeFileSync(conflist, original);
    chmodSync(path.join(bin, 'host-local'), 0o755);
  });

  describe('cnirec doctor', () => {
    it('finds the dirs in podman\'s containers.conf, reports the working setup clean and exits 0', async () => {
      const r = await doctor('--json');
      const report = JSON.parse(r.stdout) as DoctorJson;
      expect(report.problems).toEqual([]);
      expect(r.code).toBe(0);
      // A node may have containerd's packaged config too (CI installs containerd for the runtime's side): its view is its own.
      expect(report.views.filter((v) => v.readBy !== 'containerd')).toEqual([expect.objectContaining({ readBy: 'podman', confDir, binDirs: [bin], active: { file: path.basename(conflist), network: pm.network.name } })]);
      const human = await doctor();
      expect(human.code).toBe(0);
      expect(human.stdout).toContain('no problems found');
      expect(human.stdout).toContain(`${path.basename(conflist)}`);
      expect(human.stdout).toContain(`bridge → ${bin}/bridge`);
    });

    it('names a JSON typo with its line and column', async () => {
      writeFileSync(conflist, original.replace('"name":', '"name"'));
      const p = await problems();
      expect(p.map((x) => x.code)).toContain('json-syntax');
      expect(p.find((x) => x.code === 'json-syntax')?.message).toMatch(new RegExp(`^${conflist}: invalid JSON at line 3, column 10: ':' is expected here; podman skips it; fix the file$`));
    });

    it('names a type with no binary in the bin dir', async () => {
      edit((c) => (c.plugins[0]!.type = 'brigde'));
      const p = await problems();
      expect(p.map((x) => x.message)).toContain(
        `${conflist}: plugin "brigde" (plugins[0].type) is in none of ${bin}: every ADD on network "${pm.network.name}" fails with 'failed to find plugin "brigde"'; install it there or fix the type`,
      );
    });

    it('names a plugin binary that is not executable', async () => {
      chmodSync(path.join(bin, 'host-local'), 0o644);
      const p = await problems();
      expect(p.map((x) => x.message)).toContain(
        `${bin}/host-local (plugins[0].ipam.type of ${path.basename(conflist)}) is not executable: every ADD on network "${pm.network.name}" fails with "permission denied"; chmod 755 ${bin}/host-local`,
      );
    });

    it('names a cniVersion the plugin does not support, from the VERSION probes the daemon recorded', async () => {
      // podman asks each plugin for its versions before ADD: the daemon records which binary answered what.
      const run = await pm.runOnce({ cmd: ['true'] });
      expect(run.code, run.stderr).toBe(0);
      await poll('the recorded VERSION probe of bridge', async () => {
        const r = await get<{ pluginVersions: { path: string }[] }>('/api/v1/node/cni/record');
        return r.pluginVersions.some((p) => p.path === `${bin}/bridge`);
      });
      edit((c) => (c.cniVersion = '1.1.0'));
      const p = await problems();
      expect(p.find((x) => x.code === 'cni-version-unsupported')?.message).toMatch(
        new RegExp(`^${conflist} says "cniVersion": "1\\.1\\.0" but ${bin}/bridge reported supporting only 0\\.1\\.0, .*1\\.0\\.0 \\(recorded VERSION probe\\): .*set "cniVersion" to 1\\.0\\.0 or upgrade the plugin$`),
      );
      // Without the daemon the doctor says what it could not check.
      const alone = await doctor('--no-daemon');
      expect(alone.code).toBe(0);
      expect(alone.stdout).toContain('--no-daemon: the record was not asked');
    });

    it('names the file that was edited when another one, sorting first, defines the network', async () => {
      const first = path.join(confDir, '00-copy.conflist');
      writeFileSync(first, original);
      const hourAgo = Date.now() / 1000 - 3600;
      utimesSync(first, hourAgo, hourAgo);
      edit((c) => ((c.plugins[0] as { hairpinMode: boolean }).hairpinMode = false));
      const p = await problems();
      expect(p.map((x) => x.code)).toEqual(['shadowed-edit']);
      expect(p[0]?.message).toMatch(
        new RegExp(`^${path.basename(conflist)} was changed last \\(.*\\) but defines network "${pm.network.name}" like 00-copy\\.conflist, which sorts before it and is the one podman uses, so the change has no effect`),
      );
    });

    it('names an empty conf dir (the node would be NotReady)', async () => {
      renameSync(conflist, `${conflist}.off`);
      try {
        const p = await problems();
        expect(p.map((x) => x.message)).toContain(
          `${confDir} holds no network config (no .conflist file), and podman (${pm.confPath}) reads it: the node stays NotReady ("cni plugin not initialized") and pods get no network; install your network (its DaemonSet writes the file) or add a conflist there`,
        );
      } finally {
        renameSync(`${conflist}.off`, conflist);
      }
    });
  });

  it('stores a conf change between two podman runs, links each call to its version, diffs them and opens "config changed before failures"', async () => {
    const tail = new WebSocket(`${daemon.url.replace('http', 'ws')}/api/v1/tail`);
    const messages: { type: string; change?: { path: string; change: string } }[] = [];
    tail.on('message', (d) => messages.push(JSON.parse(d.toString()) as (typeof messages)[number]));
    await new Promise((r) => tail.once('open', r));

    type Versions = { items: { id: number; supersededAt: string | null; sha256: string }[] };
    const versionsOf = () => get<Versions>(`/api/v1/node/cni/conf-versions?path=${encodeURIComponent(conflist)}`);
    const sha = createHash('sha256').update(original).digest('hex');
    // The cases above rewrote the file: wait until the working version is the current one.
    const v1 = await poll('the working version', async () => (await versionsOf()).items.find((v) => v.supersededAt === null && v.sha256 === sha));
    const good = await pm.runOnce({ cmd: ['true'] });
    expect(good.code, good.stderr).toBe(0);
    // A bridge name longer than Linux allows (15 bytes): podman loads the network, bridge's ADD fails.
    edit((c) => (c.plugins[0]!.bridge = 'a-bridge-name-far-too-long'));
    const v2 = await poll('the changed version', async () => (await versionsOf()).items.find((v) => v.id > v1.id));
    const bad = await pm.runOnce({ cmd: ['true'] });
    expect(bad.code).not.toBe(0);

    const addOf = async (containerId: string) =>
      daemon.waitFor(`the ADD of ${containerId}`, (s) => s.listCalls({ containerId, command: 'ADD' }, 10).items.find((c) => c.parentId === null && c.status !== 'running'));
    const okAdd = await addOf(good.id);
    const failedAdd = await addOf(bad.id);
    expect(failedAdd.ok).toBe(false);
    type Setup = { confVersion: { id: number } | null; binary: { sha256: string; path: string } | null };
    const okSetup = await poll('the binary of the first ADD', async () => {
      const s = await get<Setup>(`/api/v1/calls/${okAdd.id}/setup`);
      return s.binary ? s : null;
    });
    expect(okSetup.confVersion?.id).toBe(v1.id);
    expect(okSetup.binary).toMatchObject({ path: `${bin}/bridge`, sha256: createHash('sha256').update(readFileSync(`${bin}/bridge`)).digest('hex') });
    expect((await get<Setup>(`/api/v1/calls/${failedAdd.id}/setup`)).confVersion?.id).toBe(v2.id);

    const diff = await get<{ diff: string }>(`/api/v1/node/cni/conf-versions/${v2.id}/diff`);
    expect(diff.diff).toMatch(new RegExp(`^-\\s+"bridge": "${pm.network.bridge}",$`, 'm'));
    expect(diff.diff).toMatch(/^\+\s+"bridge": "a-bridge-name-far-too-long",$/m);

    const finding = await poll('the finding', async () => (await get<{ items: { message: string; callId: string }[] }>('/api/v1/findings?kind=config-changed-before-failures')).items[0]);
    expect(finding.message).toContain(`ADD on network "${pm.network.name}" failed 1 time and has not succeeded since ${conflist} changed (version ${v1.id} → ${v2.id})`);
    expect(finding.message).toContain(`cnirec config diff ${v1.id} ${v2.id}`);
    expect(finding.callId).toBe(failedAdd.id);

    expect(messages.filter((m) => m.type === 'config.changed').map((m) => m.change)).toContainEqual(expect.objectContaining({ path: conflist, change: 'changed' }));
    tail.close();

    // The CLI shows the same history and diff.
    const cli = (...args: string[]) =>
      new Promise<string>((resolve) => {
        const child = spawn(process.execPath, [path.join(ROOT, 'bin/cnirec.js'), 'config', ...args, '--api', daemon.url], { env: { PATH: SYSTEM_PATH } });
        let out = '';
        child.stdout.on('data', (b: Buffer) => (out += b.toString()));
        child.on('exit', () => resolve(out));
      });
    expect(await cli('history', conflist)).toMatch(new RegExp(`#${v2.id}\\s.*${conflist}\\s+current`));
    expect(await cli('diff', String(v1.id), String(v2.id))).toContain('+      "bridge": "a-bridge-name-far-too-long",');
  }, 180_000);

  it('lists the host-local addresses a recorded GC call should free, and the ones still reserved after it', async () => {
    const net = { cniVersion: '1.0.0', name: 'gcnet', type: 'bridge', ipam: { type: 'host-local', ranges: [[{ subnet: '10.123.0.0/24' }]], dataDir: ipam } };
    const reserve = async (containerId: string) => {
      const r = await execPlugin({ plugin: '/usr/lib/cni/host-local', command: 'ADD', containerId, netns: '/proc/self/ns/net', ifname: 'eth0', stdin: JSON.stringify(net) });
      expect(r.exitCode, r.stderr.toString()).toBe(0);
      return (JSON.parse(r.stdout.toString()) as { ips: { address: string }[] }).ips[0]!.address.split('/')[0]!;
    };
    const gone = await reserve('gc-gone-container');
    const live = await reserve('gc-live-container');
    await poll('the reservations', async () => (await get<{ history: unknown[] }>(`/api/v1/ips/${gone}`)).history.length > 0);

    // CNI 1.1: a GC names no container; its stdin lists the attachments still in use.
    const gcStdin = { cniVersion: '1.1.0', name: 'gcnet', type: 'echo.sh', 'cni.dev/valid-attachments': [{ containerID: 'gc-live-container', ifname: 'eth0' }] };
    const gcRun = await execPlugin({ plugin: ECHO_PLUGIN, command: 'GC', containerId: '', netns: '', ifname: '', stdin: JSON.stringify(gcStdin) });
    expect(gcRun.exitCode).toBe(0);
    type Gc = { items: { callId: string; network: string; validAttachments: unknown[]; shouldFree: { ip: string | null; containerId: string; source: string; held: boolean }[] }[] };
    const analysis = await poll('the GC call', async () => (await get<Gc>('/api/v1/node/cni/gc')).items.find((g) => g.network === 'gcnet'));
    expect(analysis.validAttachments).toEqual([{ containerId: 'gc-live-container', ifName: 'eth0' }]);
    expect(analysis.shouldFree).toEqual([{ containerId: 'gc-gone-container', ifName: 'eth0', ip: gone, source: 'host-local', path: path.join(ipam, 'gcnet', gone), held: true }]);
    expect(analysis.shouldFree.map((h) => h.ip)).not.toContain(live);

    // host-local frees nothing on GC: the address stays reserved, and that is a finding.
    const leftover = await poll('the gc-leftover finding', async () => (await get<{ items: { ip: string; message: string }[] }>('/api/v1/findings?kind=gc-leftover')).items.find((f) => f.ip === gone));
    expect(leftover.message).toContain(`host-local still holds ${gone} on network "gcnet" for container gc-gone-container (eth0)`);
    for (const id of ['gc-gone-container', 'gc-live-container']) {
      await execPlugin({ plugin: '/usr/lib/cni/host-local', command: 'DEL', containerId: id, netns: '/proc/self/ns/net', ifname: 'eth0', stdin: JSON.stringify(net) });
    }
    mkdirSync(ipam, { recursive: true });
  }, 120_000);
});

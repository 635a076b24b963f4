/**
 * `--capture auto` with the real tracer: light (no payload probes) while all
 * is well, a successful podman ADD still showing its config and result from
 * libcni's cache; a failing ADD turns payloads on, so the runtime's retry 10 s
 * later (the kubelet's first back-off) is recorded byte-exact; an operator's
 * `cnirec capture full --pod` keeps that pod's payloads only, and `cnirec
 * capture auto` goes back to the policy, which ends payloads after the quiet
 * window.
 */

import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from './support/daemon.js';
import { execPlugin, podCniArgs } from './support/plugin-driver.js';
import { createPodmanEnv, type PodmanEnv } from './support/podman.js';
import { requirePrivilegedSuite } from './support/privileged.js';
import { poll as pollUntil } from './support/faults.js';

const FIXTURE_PLUGINS = path.resolve(import.meta.dirname, 'fixtures/plugins');
const CLI = path.resolve(import.meta.dirname, '../../bin/cnirec.js');
/** Long enough to cover the 10 s retry, short enough to see it end within the test. */
const QUIET = '20s';

const canRun = requirePrivilegedSuite();

interface Capture {
  setting: string;
  configured: string;
  mode: 'full' | 'light';
  reason: string;
  until: string | null;
  scope: { namespace: string; pod: string | null } | null;
  switching: boolean;
}
interface TracerBody {
  mode: 'full' | 'light';
  ready: boolean;
  capture: Capture;
}

describe.runIf(canRun)('auto capture with the real tracer', () => {
  let daemon: RunningDaemon;
  let pm: PodmanEnv | undefined;

  const get = async <T>(route: string): Promise<T> => {
    const res = await fetch(`${daemon.url}${route}`);
    expect(res.status, await res.clone().text()).toBe(200);
    return (await res.json()) as T;
  };
  const poll = <T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 30_000) => pollUntil(what, probe, timeoutMs, () => daemon.logs().slice(-3000), 200);
  /** The tracer runs `mode` and no switch is under way. */
  const tracerIn = (mode: 'full' | 'light', timeoutMs?: number) =>
    poll(`the tracer in ${mode} mode`, async () => {
      const t = await get<TracerBody>('/api/v1/tracer');
      return t.mode === mode && t.ready && !t.capture.switching && t.capture.mode === mode ? t : null;
    }, timeoutMs);
  const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args, '--api', daemon.url], { encoding: 'utf8', timeout: 60_000 });

  beforeAll(async () => {
    daemon = await startDaemon({ capture: 'auto', extraArgs: ['--capture-quiet', QUIET] });
  });
  afterAll(async () => {
    await pm?.cleanup();
    await daemon?.stop();
  });

  it('starts light, and a podman ADD shows its config and result from the libcni cache', async () => {
    const start = await get<TracerBody>('/api/v1/tracer');
    expect(start.capture).toMatchObject({ setting: 'auto', configured: 'auto', mode: 'light', until: null });
    expect(start.mode).toBe('light');

    pm = await createPodmanEnv({ networkPrefix: 'cnirec-auto' });
    await pm.ensureImage();
    const id = await pm.runContainer({ cmd: ['sleep', '120'], name: `cnirec-auto-${Date.now().toString(36)}` });
    const entry = await poll('the cache entry linked to its ADD', async () => {
      const { items } = await get<{ items: { addCallId: string | null; networkName: string; result: unknown; config: unknown }[] }>(`/api/v1/cache?containerId=${id}`);
      return items.find((e) => e.addCallId !== null);
    }, 60_000);
    const add = await get<Record<string, unknown>>(`/api/v1/calls/${entry.addCallId}`);
    expect(add).toMatchObject({ command: 'ADD', captureMode: 'light', configSource: 'cache', resultSource: 'cache', stdin: { bytes: 0 }, stdout: { bytes: 0 } });
    // What the runtime gave and got, as libcni cached it (the cache entry the daemon stored, already redacted).
    expect(add.config).toEqual(entry.config);
    expect(add.result).toEqual(entry.result);
    expect((add.config as { name: string }).name).toBe(entry.networkName);
    await pm.removeContainer(id);
  });

  it('turns payloads on when an ADD fails, so the retry 10 s later is recorded byte-exact', async () => {
    const containerId = `auto${Date.now().toString(16)}`;
    const cniArgs = podCniArgs('auto-ns', 'flaky-pod', '0b1e9a10-0000-4000-8000-000000000001', containerId);
    const config = Buffer.from(JSON.stringify({ cniVersion: '1.0.0', name: 'flaky-net', type: 'flaky.sh' }));
    const base = { plugin: path.join(FIXTURE_PLUGINS, 'flaky.sh'), command: 'ADD', containerId, netns: '/var/run/netns/none', ifname: 'eth0', cniArgs, cniPath: FIXTURE_PLUGINS };

    const first = await execPlugin({ ...base, stdin: config });
    expect(first.exitCode).toBe(1);
    const failedAt = Date.now();
    const [failed] = await daemon.waitFor('the failed ADD', () => {
      const c = daemon.callsFor(containerId);
      return c.length > 0 ? c : null;
    });
    expect(failed).toMatchObject({ exitCode: 1, captureMode: 'light' });
    expect(failed!.stdin.bytes.length).toBe(0);

    const full = await tracerIn('full');
    expect(full.capture.reason).toBe('auto: ADD of flaky.sh for auto-ns/flaky-pod failed (exit 1)');
    expect(Date.parse(full.capture.until!)).toBeGreaterThan(Date.now());

    // The kubelet's first back-off.
    await new Promise((r) => setTimeout(r, Math.max(0, failedAt + 10_000 - Date.now())));
    const retry = await execPlugin({ ...base, stdin: config });
    expect(retry.exitCode).toBe(0);
    const calls = await daemon.waitFor('the retried ADD', () => {
      const c = daemon.callsFor(containerId);
      return c.length > 1 ? c : null;
    });
    expect(calls).toHaveLength(2);
    const ok = calls[1]!;
    expect(ok).toMatchObject({ exitCode: 0, captureMode: 'full' });
    expect(ok.stdin.bytes.equals(retry.stdinBytes)).toBe(true);
    expect(ok.stdout.bytes.equals(retry.stdout)).toBe(true);
    expect(ok.stdin.truncated || ok.stdout.truncated).toBe(false);
  });

  it('an operator’s full for one pod keeps that pod’s payloads only; `capture auto` hands back to the policy', async () => {
    const set = cli('capture', 'full', '--for', '2m', '--pod', 'op-ns/web');
    expect(set.status, set.stderr).toBe(0);
    expect(set.stdout).toContain('capture full (configured: auto)');
    expect(set.stdout).toContain('pod op-ns/web');
    const t = await tracerIn('full');
    expect(t.capture).toMatchObject({ setting: 'full', scope: { namespace: 'op-ns', pod: 'web' } });

    const echo = (pod: string, containerId: string) =>
      execPlugin({
        plugin: path.join(FIXTURE_PLUGINS, 'echo.sh'),
        command: 'ADD',
        containerId,
        netns: '/var/run/netns/none',
        ifname: 'eth0',
        cniArgs: podCniArgs('op-ns', pod, '0b1e9a10-0000-4000-8000-000000000002', containerId),
        cniPath: FIXTURE_PLUGINS,
        stdin: `{"cniVersion":"1.0.0","name":"echo-${pod}","type":"echo.sh"}`,
      });
    const stamp = Date.now().toString(16);
    const mine = await echo('web', `opweb${stamp}`);
    const other = await echo('db', `opdb${stamp}`);
    expect(mine.exitCode).toBe(0);
    expect(other.exitCode).toBe(0);
    const [web] = await daemon.waitFor('the in-scope call', () => daemon.callsFor(`opweb${stamp}`)[0] && daemon.callsFor(`opweb${stamp}`));
    const [db] = await daemon.waitFor('the out-of-scope call', () => daemon.callsFor(`opdb${stamp}`)[0] && daemon.callsFor(`opdb${stamp}`));
    expect(web).toMatchObject({ captureMode: 'full' });
    expect(web!.stdin.bytes.equals(mine.stdinBytes)).toBe(true);
    expect(web!.stdout.bytes.equals(mine.stdout)).toBe(true);
    expect(db).toMatchObject({ captureMode: 'light' });
    expect(db!.stdin.bytes.length + db!.stdout.bytes.length).toBe(0);

    const back = cli('capture', 'auto', '-o', 'json');
    expect(back.status, back.stderr).toBe(0);
    expect(JSON.parse(back.stdout)).toMatchObject({ setting: 'auto', scope: null });
    // The failed ADD's window (20 s) has passed by now or soon: payloads go off by themselves.
    const light = await tracerIn('light', 60_000);
    expect(light.capture).toMatchObject({ setting: 'auto', mode: 'light', until: null, reason: 'auto: quiet, no failing calls or loops' });

    const shown = cli('capture');
    expect(shown.status, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('light (no payloads)');
  });

  it('says what it is asked wrongly, without a stack trace', () => {
    const bad = cli('capture', 'light', '--pod', 'op-ns/web');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--pod and --namespace narrow `full` only');
    expect(bad.stderr).not.toMatch(/\n\s+at /);
  });
});

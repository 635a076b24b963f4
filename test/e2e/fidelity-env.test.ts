/**
 * The call's CNI_* variables come whole from wherever they sit in a big
 * environment, and nothing else of it is kept. A runtime or Multus in a pod
 * inherits seven variables per Service: hundreds before CNI_COMMAND are
 * normal, and libcni puts CNI_* in any order. Real bpftrace, a real plugin
 * (a script that keeps the environment the kernel gave it, /proc/self/environ,
 * for the test to compare with), the daemon's database and API.
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredCall } from '../../store/index.js';
import { startDaemon, type RunningDaemon } from './support/daemon.js';
import { podCniArgs } from './support/plugin-driver.js';
import { requirePrivilegedSuite } from './support/privileged.js';
import { SYSTEM_PATH } from './support/proc.js';

const PLUGIN = path.resolve(import.meta.dirname, 'fixtures/env/plugin.sh');
const CONFIG = '{"cniVersion":"1.0.0","name":"env","type":"plugin.sh"}';
const SECRET = `s3cr3t-${process.pid}-${Date.now().toString(36)}-never-stored`;

const canRun = requirePrivilegedSuite();

/** `count` Service variables as the kubelet sets them (seven per Service, 75 bytes on average), Services numbered from `first`. */
function serviceEnv(count: number, first = 0): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = first; out.length < count; i++) {
    const svc = `PAYMENTS_GATEWAY_BACKEND_SERVICE_NUMBER_${i}`;
    const ip = `10.96.${i >> 8}.${i & 255}`;
    out.push(
      [`${svc}_SERVICE_HOST`, ip],
      [`${svc}_SERVICE_PORT`, '8080'],
      [`${svc}_PORT`, `tcp://${ip}:8080`],
      [`${svc}_PORT_8080_TCP`, `tcp://${ip}:8080`],
      [`${svc}_PORT_8080_TCP_PROTO`, 'tcp'],
      [`${svc}_PORT_8080_TCP_PORT`, '8080'],
      [`${svc}_PORT_8080_TCP_ADDR`, ip],
    );
  }
  return out.slice(0, count);
}

describe.runIf(canRun)('the CNI_* variables of a big environment', () => {
  let daemon: RunningDaemon;
  let dumps: string;
  let seq = 0;

  beforeAll(async () => {
    dumps = mkdtempSync(path.join(tmpdir(), 'cnirec-e2e-env-'));
    daemon = await startDaemon({ capture: 'full' });
  });
  afterAll(async () => {
    await daemon?.stop();
    if (dumps) rmSync(dumps, { recursive: true, force: true });
  });

  /**
   * Runs the plugin with exactly these variables, in this order (Node passes
   * an env object's keys in order): `before`, then the CNI_* ones, then `after`.
   * Returns the environment the plugin really got, as NAME=value entries in order.
   */
  function run(name: string, cni: Record<string, string>, before: Array<[string, string]>, after: Array<[string, string]> = []): { containerId: string; passed: string[] } {
    const containerId = `env-${name}-${Date.now().toString(36)}-${seq++}`;
    const env: Record<string, string> = {};
    for (const [k, v] of [['PATH', SYSTEM_PATH], ['ENV_DUMP_DIR', dumps], ...before] as Array<[string, string]>) env[k] = v;
    Object.assign(env, { CNI_COMMAND: 'ADD', CNI_CONTAINERID: containerId, CNI_NETNS: `/var/run/netns/${containerId}`, CNI_IFNAME: 'eth0', CNI_PATH: path.dirname(PLUGIN), ...cni });
    for (const [k, v] of after) env[k] = v;
    const res = spawnSync(PLUGIN, [], { argv0: PLUGIN, env, input: CONFIG, timeout: 30_000 });
    expect(res.status, res.stderr.toString()).toBe(0);
    expect(JSON.parse(res.stdout.toString())).toMatchObject({ cniVersion: '1.0.0' });
    const dump = path.join(dumps, `${containerId}.environ`);
    expect(existsSync(dump)).toBe(true);
    const passed = readFileSync(dump, 'utf8').split('\0').filter((e) => e.length > 0);
    return { containerId, passed };
  }

  async function recordOf(containerId: string): Promise<StoredCall> {
    const [call] = await daemon.waitFor(`the call of ${containerId}`, () => {
      const calls = daemon.callsFor(containerId).filter((c) => c.status !== 'running');
      return calls.length > 0 ? calls : null;
    });
    return call!;
  }

  /** The CNI_* entries the plugin really got, as a record. */
  const cniOf = (passed: readonly string[]): Record<string, string> =>
    Object.fromEntries(passed.filter((e) => e.startsWith('CNI_')).map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));

  const envBytes = (entries: readonly string[]) => entries.reduce((n, e) => n + Buffer.byteLength(e) + 1, 0);

  it('finds them after 300 other variables (over 20 KiB), a secret among those, and keeps nothing else', async () => {
    const args = podCniArgs('team-a', 'web-7', 'uid-7', 'infra-7');
    const { containerId, passed } = run('many', { CNI_ARGS: args }, [...serviceEnv(150), ['MY_API_TOKEN', SECRET], ...serviceEnv(150, 100)]);
    const commandAt = passed.findIndex((e) => e.startsWith('CNI_COMMAND='));
    expect(commandAt).toBeGreaterThan(300);
    expect(envBytes(passed.slice(0, commandAt))).toBeGreaterThan(20 * 1024);

    const call = await recordOf(containerId);
    expect(call.command).toBe('ADD');
    expect(call.containerId).toBe(containerId);
    expect(call.netns).toBe(`/var/run/netns/${containerId}`);
    expect(call.ifname).toBe('eth0');
    expect(call).toMatchObject({ podNamespace: 'team-a', podName: 'web-7', podUid: 'uid-7' });
    expect(call.env).toEqual(cniOf(passed));
    expect(call.envTruncated ?? false).toBe(false);

    // The secret sat before the CNI_* entries: it is nowhere, neither in the database files nor in the API's answers.
    const answers = [
      await (await fetch(`${daemon.url}/api/v1/calls/${call.id}`)).text(),
      await (await fetch(`${daemon.url}/api/v1/calls?limit=200`)).text(),
    ];
    expect(answers[0]).toContain(containerId);
    for (const answer of answers) expect(answer.includes(SECRET)).toBe(false);
    const files = ['', '-wal'].map((s) => daemon.dbPath + s).filter((f) => existsSync(f));
    const stored = Buffer.concat(files.map((f) => readFileSync(f)));
    expect(stored.includes(containerId)).toBe(true);
    expect(stored.includes(SECRET)).toBe(false);
    expect(stored.includes('BACKEND_SERVICE_NUMBER_')).toBe(false);
  });

  it('keeps an 8 KiB CNI_ARGS whole after 8 KiB of other variables', async () => {
    const args = `${podCniArgs('team-b', 'db-0', 'uid-0', 'infra-0')};PADDING=${'p'.repeat(8 * 1024 - 120)}`;
    expect(Buffer.byteLength(args)).toBeGreaterThan(8 * 1024 - 20);
    const { containerId, passed } = run('args8k', { CNI_ARGS: args }, serviceEnv(160));
    const argsAt = passed.findIndex((e) => e.startsWith('CNI_ARGS='));
    expect(envBytes(passed.slice(0, argsAt))).toBeGreaterThan(8 * 1024);

    const call = await recordOf(containerId);
    expect(call.env.CNI_ARGS).toBe(args);
    expect(call.env).toEqual(cniOf(passed));
    expect(call).toMatchObject({ podNamespace: 'team-b', podName: 'db-0' });
    expect(call.envTruncated ?? false).toBe(false);
  });

  it('marks the env truncated when a CNI_* entry is longer than the tracer takes, and keeps its beginning', async () => {
    const args = `${podCniArgs('team-c', 'big-0', 'uid-c', 'infra-c')};PADDING=${'q'.repeat(100 * 1024)}`;
    const { containerId, passed } = run('oversize', { CNI_ARGS: args }, serviceEnv(20));
    const call = await recordOf(containerId);
    expect(call.envTruncated).toBe(true);
    // The tracer sends the argv+env block up to 64 KiB: CNI_ARGS (last here) is kept up to there.
    expect(args.startsWith(call.env.CNI_ARGS!)).toBe(true);
    expect(call.env.CNI_ARGS!.length).toBeGreaterThan(32 * 1024);
    expect(call.env.CNI_ARGS!.length).toBeLessThan(args.length);
    // The other entries, and the pod from the part of CNI_ARGS that was kept, are right.
    const { CNI_ARGS: _cut, ...others } = cniOf(passed);
    expect(call.env).toMatchObject(others);
    expect(call.command).toBe('ADD');
    expect(call).toMatchObject({ podNamespace: 'team-c', podName: 'big-0' });
  });

  it('does not mark a small environment truncated', async () => {
    const { containerId, passed } = run('small', { CNI_ARGS: podCniArgs('team-d', 'api-1', 'uid-d', 'infra-d') }, [], [['TRACEPARENT', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01']]);
    const call = await recordOf(containerId);
    expect(call.envTruncated ?? false).toBe(false);
    expect(call.env).toEqual({ ...cniOf(passed), TRACEPARENT: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
    expect(call).toMatchObject({ podNamespace: 'team-d', podName: 'api-1' });
  });
});

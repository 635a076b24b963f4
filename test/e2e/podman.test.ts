/**
 * A real runtime: podman 4.3 on its CNI backend (libcni) runs a container;
 * the daemon records podman's VERSION probes, the ADD and the DEL, with
 * podman as the calling process and host-local under bridge.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from './support/daemon.js';
import { createPodmanEnv, type PodmanEnv } from './support/podman.js';
import { requirePrivilegedSuite } from './support/privileged.js';

const canRun = requirePrivilegedSuite();

describe.runIf(canRun)('recording podman on the CNI backend', () => {
  let daemon: RunningDaemon;
  let pm: PodmanEnv;

  beforeAll(async () => {
    daemon = await startDaemon();
    pm = await createPodmanEnv({ networkPrefix: 'cnirec-pm' });
    await pm.ensureImage();
  });
  afterAll(async () => {
    await pm?.cleanup();
    await daemon?.stop();
  });

  it('records VERSION, ADD and DEL of a container with podman as the caller', async () => {
    const run = await pm.runOnce({ cmd: ['ip', 'addr'], name: `cnirec-e2e-${Date.now().toString(36)}` });
    expect(run.code, run.stderr).toBe(0);
    const address = /inet (10\.[0-9.]+)\/24/.exec(run.stdout)?.[1];
    expect(address).toBeDefined();

    const calls = await daemon.waitFor(
      'podman ADD and DEL of the container',
      () => {
        const all = daemon.callsFor(run.id, { includeVersion: true });
        const bridge = all.filter((c) => c.plugin === 'bridge' && c.parentId === null);
        return bridge.some((c) => c.command === 'DEL') && bridge.some((c) => c.command === 'ADD') ? all : null;
      },
      30_000,
    );
    const add = calls.find((c) => c.command === 'ADD' && c.plugin === 'bridge')!;
    const del = calls.find((c) => c.command === 'DEL' && c.plugin === 'bridge')!;
    expect(add.parentComm).toBe('podman');
    expect(add.exitCode).toBe(0);
    expect(add.podName).toBeNull(); // podman passes K8S_POD_NAME only: no namespace, no pod
    expect(add.env.CNI_ARGS).toContain('K8S_POD_NAME=');
    expect(add.netns).toMatch(/^\/run\/netns\/netns-/);
    const result = JSON.parse(add.stdout.bytes.toString()) as { ips: Array<{ address: string }> };
    expect(result.ips[0]!.address).toBe(`${address}/24`);
    // Only CNI_* variables of podman's whole environment are kept.
    expect(Object.keys(add.env).every((k) => k.startsWith('CNI_'))).toBe(true);
    expect(JSON.parse(add.stdin.bytes.toString())).toMatchObject({ type: 'bridge', name: pm.network.name });
    expect(del.exitCode).toBe(0);
    expect(del.parentComm).toBe('podman');

    const ipam = calls.find((c) => c.command === 'ADD' && c.plugin === 'host-local')!;
    expect(ipam.parentId).toBe(add.id);

    // podman probes every plugin of the list with VERSION first; those calls carry no container id.
    const versions = daemon.store.listCalls({ command: 'VERSION', sinceUs: add.startedAtUs - 5_000_000 }, 100).items;
    expect(versions.some((v) => v.plugin === 'bridge' && v.isVersionProbe && v.parentComm === 'podman')).toBe(true);
  });
});

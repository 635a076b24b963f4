/**
 * The tracer never outlives the daemon: bpftrace left running would keep its
 * probes attached, taxing every syscall of the node with nobody reading.
 *
 * - the daemon SIGKILLed (as the OOM killer does): the kernel kills bpftrace
 *   (setpriv --pdeathsig);
 * - a websocket upgrade refused (401, no token) then SIGTERM: the daemon
 *   stops at once, not after its shutdown deadline, and bpftrace goes;
 * - a plain SIGTERM: the same.
 *
 * bpftrace is identified by the pid /healthz reports and its command line,
 * so another bpftrace on the machine never counts.
 */

import { readFileSync } from 'node:fs';
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from './support/daemon.js';
import { health, poll } from './support/faults.js';
import { requirePrivilegedSuite } from './support/privileged.js';

const canRun = requirePrivilegedSuite();
const TOKEN = 'lifecycle-test-token-0123456789';

/** Whether `pid` is still a bpftrace process (a reused pid running something else does not count). */
function isBpftrace(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]!.endsWith('bpftrace');
  } catch {
    return false;
  }
}

async function tracerPid(daemon: RunningDaemon): Promise<number> {
  const pid = (await health(daemon.url)).tracer.pid;
  if (pid === null) throw new Error('/healthz names no tracer pid');
  expect(isBpftrace(pid)).toBe(true);
  return pid;
}

/** A websocket upgrade to the tail without the token: answered 401. Resolves with the status. */
function refusedUpgrade(url: string): Promise<number> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: hostname,
      port,
      path: '/api/v1/tail',
      headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version': '13' },
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      reject(new Error('the upgrade was accepted without a token'));
    });
    req.on('error', reject);
    req.end();
  });
}

const gone = (pid: number, daemon: RunningDaemon) => poll(`bpftrace ${pid} to be gone`, () => !isBpftrace(pid), 5_000, () => daemon.logs(), 20);

describe.runIf(canRun)('the tracer never outlives the daemon', () => {
  it('the kernel ends bpftrace when the daemon is SIGKILLed', async () => {
    const daemon = await startDaemon({ capture: 'light' });
    const pid = await tracerPid(daemon);
    const res = await daemon.stop('SIGKILL');
    expect(res.signal).toBe('SIGKILL');
    await gone(pid, daemon);
  });

  it('a refused websocket upgrade does not hold up SIGTERM, and bpftrace is stopped', async () => {
    const daemon = await startDaemon({ capture: 'light', extraArgs: ['--token', TOKEN] });
    const pid = await tracerPid(daemon);
    expect(await refusedUpgrade(daemon.url)).toBe(401);
    const logs = daemon.logs();
    const t0 = Date.now();
    const res = await daemon.stop('SIGTERM');
    const tookMs = Date.now() - t0;
    console.info(`SIGTERM after a refused upgrade: exited in ${tookMs} ms`);
    expect(res.code, logs).toBe(0);
    expect(tookMs).toBeLessThan(2_000);
    expect(daemon.logs()).not.toMatch(/shutdown took too long/);
    await gone(pid, daemon);
  });

  it('a plain SIGTERM stops the daemon and bpftrace quickly', async () => {
    const daemon = await startDaemon({ capture: 'full' });
    const pid = await tracerPid(daemon);
    const t0 = Date.now();
    const res = await daemon.stop('SIGTERM');
    const tookMs = Date.now() - t0;
    console.info(`plain SIGTERM: exited in ${tookMs} ms`);
    expect(res.code).toBe(0);
    // Well inside the daemon's own 5 s shutdown deadline. A full-mode daemon stopped right as it records
    // still has its standby compiling (at the tracers' raised priority), and the full program has more
    // probes to detach since it follows kernel changes: ~2.1-2.2 s on a loaded 2-CPU machine.
    expect(tookMs).toBeLessThan(3_000);
    await gone(pid, daemon);
  });
});

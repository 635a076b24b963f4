/**
 * Fault: the database's disk fills up, or every write to the database
 * fails. The daemon keeps serving what it
 * has, says so loudly but once (/healthz degraded with the reason, a metric,
 * one error log line per outage), keeps recording into a bounded queue,
 * does not exit, and writes what it kept once the disk is back.
 *
 * The database lives on a small tmpfs of the test's own, unmounted after.
 */

import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from './support/daemon.js';
import { callsOf, echoCall, getJson, health, metric, metrics, poll, type CallDetailBody } from './support/faults.js';
import { runOk } from './support/proc.js';
import { requirePrivilegedSuite } from './support/privileged.js';

const canRun = requirePrivilegedSuite();

const TMPFS_SIZE = '24m';
const OUTAGE_LOG = /cannot write to the database/g;
const RESUMED_LOG = /the database is writable again/g;

/** Writes `file` until the file system says ENOSPC; returns the bytes written. */
function fillDisk(file: string): number {
  const fd = openSync(file, 'w');
  let written = 0;
  try {
    for (const size of [1 << 20, 64 << 10, 4 << 10, 512]) {
      const chunk = Buffer.alloc(size, 0x5a);
      for (;;) {
        try {
          written += writeSync(fd, chunk);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw err;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return written;
}

describe.runIf(canRun)('a full or unwritable database disk', () => {
  let scratch: string;
  let disk: string;
  let mounted = false;
  let daemon: RunningDaemon;
  const prefix = `disk${Date.now().toString(36)}`;
  const made = new Map<string, Buffer>();

  const call = async (name: string, bytes: number) => {
    const r = await echoCall(`${prefix}-${name}`, bytes);
    expect(r.exitCode).toBe(0);
    made.set(`${prefix}-${name}`, r.stdinBytes);
  };
  const storedIntact = async (containerId: string) => {
    const [c, ...more] = (await callsOf(daemon.url, containerId)).filter((x) => x.status === 'finished');
    if (!c || more.length > 0) return false;
    const detail = await getJson<CallDetailBody>(`${daemon.url}/api/v1/calls/${c.id}`);
    return Buffer.from(detail.stdin.base64, 'base64').equals(made.get(containerId)!);
  };
  const allStored = async (names: string[]) => {
    for (const n of names) if (!(await storedIntact(`${prefix}-${n}`))) return false;
    return true;
  };

  beforeAll(async () => {
    scratch = mkdtempSync(path.join(tmpdir(), 'cnirec-e2e-faults-disk-'));
    disk = path.join(scratch, 'disk');
    mkdirSync(disk);
    await runOk('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_SIZE},mode=0700`, 'cnirec-e2e-disk', disk]);
    mounted = true;
    daemon = await startDaemon({ extraArgs: ['--db', path.join(disk, 'cnirec.db'), '--cni-cache-dirs', '', '--host-local-dirs', ''] });
  });
  afterAll(async () => {
    await daemon?.stop();
    if (mounted) await runOk('umount', [disk]);
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('keeps serving and recording while the disk is full, says so once, and stores what it kept when space returns', async () => {
    const early = ['early-0', 'early-1', 'early-2'];
    for (const n of early) await call(n, 1024);
    await poll('the calls made before the disk filled to be stored', () => allStored(early), 20_000, () => daemon.logs());

    const filler = path.join(disk, 'filler');
    const filled = fillDisk(filler);
    // Calls big enough that SQLite must grow its files to store them.
    const whileFull = Array.from({ length: 12 }, (_, i) => `full-${i}`);
    for (const n of whileFull.slice(0, 6)) await call(n, 48 * 1024);

    const degraded = await poll('/healthz to report the full disk', async () => {
      const h = await health(daemon.url);
      return h.status === 'degraded' && !h.store.writable ? h : null;
    }, 20_000, () => daemon.logs());
    expect(degraded.problems.join(' ')).toMatch(/database cannot be written since .*disk is full; free some space.* calls are kept in memory and retried every second/);
    expect(degraded.store.failingSince).toEqual(expect.any(String));
    expect(degraded.tracer.ready).toBe(true);
    expect(metric(await metrics(daemon.url), 'cnirec_store_writable')).toBe(0);

    // More calls while full: still recorded (in memory), still one log line for the outage.
    for (const n of whileFull.slice(6)) await call(n, 48 * 1024);
    await poll('the calls made while full to wait in memory', async () => (await health(daemon.url)).store.pendingWrites >= whileFull.length, 20_000, () => daemon.logs());
    // What it has is still served.
    for (const n of early) expect(await storedIntact(`${prefix}-${n}`)).toBe(true);
    expect(daemon.process.exitCode).toBeNull();
    expect(daemon.logs().match(OUTAGE_LOG)).toHaveLength(1);
    console.info(`disk full: ${filled} filler bytes; ${(await health(daemon.url)).store.pendingWrites} calls waiting in memory`);

    rmSync(filler);
    await poll('the calls kept in memory to be stored', () => allStored([...early, ...whileFull]), 20_000, () => daemon.logs());
    const back = await health(daemon.url);
    expect(back).toMatchObject({ status: 'ok', problems: [], store: { writable: true, pendingWrites: 0, droppedWrites: 0, failingSince: null } });
    expect(metric(await metrics(daemon.url), 'cnirec_store_writable')).toBe(1);
    expect(daemon.logs().match(RESUMED_LOG)).toHaveLength(1);
  });

  it('keeps serving and recording while every write to the database fails, and writes again once it can', async () => {
    // A read-only remount is refused while the daemon holds the file open for writing (EBUSY), so the
    // fault is made the other way: the daemon's file-size limit drops to 1 byte, and every write SQLite
    // makes to its files fails (EFBIG: an I/O error to SQLite), as on a failing or read-only disk.
    const pid = String(daemon.process.pid);
    // The soft limit only: raising a hard limit again would need CAP_SYS_RESOURCE.
    await runOk('prlimit', ['--pid', pid, '--fsize=1:']);
    const names = ['unwritable-0', 'unwritable-1', 'unwritable-2'];
    try {
      for (const n of names) await call(n, 2048);
      const degraded = await poll('/healthz to report the unwritable database', async () => {
        const h = await health(daemon.url);
        return h.status === 'degraded' ? h : null;
      }, 20_000, () => daemon.logs());
      expect(degraded.problems.join(' ')).toMatch(/cannot be written since .*the disk reported an I\/O error/);
      expect(metric(await metrics(daemon.url), 'cnirec_store_writable')).toBe(0);
      expect(await storedIntact(`${prefix}-early-0`)).toBe(true);
      expect(daemon.process.exitCode).toBeNull();
    } finally {
      await runOk('prlimit', ['--pid', pid, '--fsize=unlimited:']);
    }
    await poll('the calls kept in memory to be stored', () => allStored(names), 20_000, () => daemon.logs());
    expect(await health(daemon.url)).toMatchObject({ status: 'ok', store: { writable: true, pendingWrites: 0, droppedWrites: 0 } });
    expect(daemon.logs().match(OUTAGE_LOG)).toHaveLength(2);
    expect(daemon.logs().match(RESUMED_LOG)).toHaveLength(2);
  });
});

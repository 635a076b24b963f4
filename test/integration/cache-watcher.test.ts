import { chmodSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CacheEvent } from '../../collector/cache/cache-types.js';
import { createCacheWatcher, type CacheWatcher } from '../../collector/cache/cache-watcher.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/cache');
const PODMAN_FILE = `podman-test-net-${'1'.repeat(64)}-eth0`;

describe('cache watcher', () => {
  let root: string;
  let results: string;
  let ipam: string;
  let watcher: CacheWatcher;
  let events: CacheEvent[];

  const until = async (what: string, pred: () => boolean, ms = 3000) => {
    const end = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}; events: ${JSON.stringify(events.map((e) => e.type))}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  const start = async (rescanIntervalMs = 60_000) => {
    watcher = createCacheWatcher({ resultDirs: [results], ipamDirs: [ipam], logger: pino({ level: 'silent' }), rescanIntervalMs });
    watcher.subscribe({ onCacheEvents: (batch) => events.push(...batch) });
    await watcher.start();
  };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'cnirec-cache-'));
    results = join(root, 'results');
    ipam = join(root, 'networks');
    mkdirSync(results);
    mkdirSync(join(ipam, 'podman-test-net'), { recursive: true });
    events = [];
  });
  afterEach(async () => {
    await watcher?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('reads everything at start, skips host-local bookkeeping, and reports the broken files', async () => {
    execFileSync('cp', ['-a', `${FIXTURES}/results/.`, results]);
    execFileSync('cp', ['-a', `${FIXTURES}/networks/.`, ipam]);
    await start();
    const count = (t: string) => events.filter((e) => e.type === t).length;
    expect(count('cache.added')).toBe(3);
    expect(count('ip.allocated')).toBe(2);
    expect(events.filter((e) => e.type === 'cache.problem').map((e) => (e.type === 'cache.problem' ? e.problem.kind : '')).sort()).toEqual(['corrupt-json', 'empty-file', 'wrong-shape']);
    const rec = events.at(-1);
    expect(rec?.type).toBe('cache.reconciled');
    if (rec?.type === 'cache.reconciled') {
      expect(rec.dirs).toEqual([results, ipam]);
      expect(rec.livePaths).toHaveLength(5);
    }
  });

  it('follows a create, a rename-into-place rewrite and a delete', async () => {
    await start();
    events = [];
    const path = join(results, PODMAN_FILE);
    const body = readFileSync(join(FIXTURES, 'results', PODMAN_FILE), 'utf8');
    writeFileSync(path, body);
    await until('added', () => events.some((e) => e.type === 'cache.added'));
    writeFileSync(join(results, '.tmp-write'), body.replace('10.213.205.2/24', '10.213.205.9/24'));
    renameSync(join(results, '.tmp-write'), path);
    await until('changed', () => events.some((e) => e.type === 'cache.changed'));
    const changed = events.find((e) => e.type === 'cache.changed');
    expect(changed?.type === 'cache.changed' && changed.entry.ips).toEqual(['10.213.205.9']);
    unlinkSync(path);
    await until('removed', () => events.some((e) => e.type === 'cache.removed'));
  });

  it('follows host-local reservations in a network directory created after start', async () => {
    await start();
    events = [];
    const net = join(ipam, 'late-net');
    mkdirSync(net);
    // The new directory's watch is attached when its creation is seen; a file written right away may
    // beat it, which the directory scan then picks up.
    writeFileSync(join(net, '10.1.0.5'), 'abc\r\neth1');
    writeFileSync(join(net, 'lock'), '');
    await until('allocated', () => events.some((e) => e.type === 'ip.allocated'));
    const a = events.find((e) => e.type === 'ip.allocated');
    expect(a?.type === 'ip.allocated' && a.allocation).toMatchObject({ network: 'late-net', ip: '10.1.0.5', containerId: 'abc', ifName: 'eth1' });
    writeFileSync(join(net, '10.1.0.6'), 'def');
    await until('second allocated', () => events.filter((e) => e.type === 'ip.allocated').length === 2);
    rmSync(net, { recursive: true });
    await until('released', () => events.filter((e) => e.type === 'ip.released').length === 2);
  });

  it('does not follow symlinks, does not block on a FIFO, refuses huge files, survives the directory vanishing', async () => {
    writeFileSync(join(root, 'outside'), readFileSync(join(FIXTURES, 'results', PODMAN_FILE)));
    symlinkSync(join(root, 'outside'), join(results, 'net-link-eth0'));
    execFileSync('mkfifo', [join(results, 'net-fifo-eth0')]);
    writeFileSync(join(results, 'net-huge-eth0'), Buffer.alloc(2 * 1024 * 1024, 0x20));
    await start();
    const kinds = events.flatMap((e) => (e.type === 'cache.problem' ? [`${e.problem.path.split('/').pop()}:${e.problem.kind}`] : [])).sort();
    expect(kinds).toEqual(['net-fifo-eth0:not-a-regular-file', 'net-huge-eth0:too-large', 'net-link-eth0:not-a-regular-file']);
    expect(events.some((e) => e.type === 'cache.added')).toBe(false);

    events = [];
    rmSync(results, { recursive: true });
    await watcher.rescan();
    expect(events.filter((e) => e.type === 'cache.problem-cleared')).toHaveLength(3);
    mkdirSync(results);
    writeFileSync(join(results, PODMAN_FILE), readFileSync(join(FIXTURES, 'results', PODMAN_FILE)));
    await watcher.rescan();
    expect(events.some((e) => e.type === 'cache.added')).toBe(true);
  });

  it('reports a half-written file, and an unreadable directory as a problem (non-root only)', async () => {
    await start(50);
    events = [];
    writeFileSync(join(results, 'x-y-eth0'), '{"kind":"cniCacheV1"');
    await until('problem', () => events.some((e) => e.type === 'cache.problem'));
    if (process.getuid?.() !== 0) {
      chmodSync(results, 0);
      await until('unreadable dir', () => events.some((e) => e.type === 'cache.problem' && e.problem.kind === 'directory-unreadable'));
      chmodSync(results, 0o700);
    }
  });
});

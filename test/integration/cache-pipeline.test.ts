import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCacheWiring, type CacheWiring } from '../../daemon/cache-wiring.js';
import { openDatabase, type Database } from '../../store/index.js';

const FIXTURE = path.join(import.meta.dirname, '../fixtures/cache/results', `podman-test-net-${'1'.repeat(64)}-eth0`);

describe('cache directories → store (the daemon wiring, without the tracer)', () => {
  let dir: string;
  let db: Database;
  let wiring: CacheWiring;
  const results = () => path.join(dir, 'results');
  const ipam = () => path.join(dir, 'networks');
  const until = async (what: string, pred: () => boolean) => {
    const end = Date.now() + 5000;
    while (!pred()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const start = async () => {
    wiring = createCacheWiring(db, { cniCacheDirs: [results()], hostLocalDirs: [ipam()], cacheRescanMs: 200, db: 'test.db' }, pino({ level: 'silent' }));
    await wiring.start();
  };

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cnirec-cache-pipe-'));
    fs.mkdirSync(results());
    fs.mkdirSync(path.join(ipam(), 'podman-test-net'), { recursive: true });
    db = openDatabase(path.join(dir, 'c.db'));
  });
  afterEach(async () => {
    await wiring?.stop();
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('stores entries and IPs as files come and go, and a corrupt file as a finding', async () => {
    await start();
    const reader = wiring.reader!;
    fs.copyFileSync(FIXTURE, path.join(results(), path.basename(FIXTURE)));
    fs.writeFileSync(path.join(ipam(), 'podman-test-net', '10.213.205.2'), `${'1'.repeat(64)}\r\neth0`);
    await until('entry stored', () => reader.listCacheEntries({}).length === 1);
    await until('ip stored', () => reader.ipHistory('10.213.205.2').some((h) => h.source === 'host-local'));

    fs.writeFileSync(path.join(results(), 'broken-net-abc-eth0'), '{"kind":"cniCacheV1","containerId":"ab');
    await until('finding', () => reader.listFindings({}).some((f) => f.kind === 'corrupt-json'));
    expect(reader.listFindings({})[0]?.message).toMatch(/not valid JSON/);

    fs.unlinkSync(path.join(results(), path.basename(FIXTURE)));
    await until('entry removed', () => reader.listCacheEntries({}).length === 0);
    expect(reader.listCacheEntries({ includeRemoved: true })[0]?.removedAtMs).not.toBeNull();
  });

  it('reconciles a restart: no duplicates, and what vanished meanwhile is closed', async () => {
    fs.copyFileSync(FIXTURE, path.join(results(), path.basename(FIXTURE)));
    await start();
    await wiring.stop();
    await start();
    expect(wiring.reader!.listCacheEntries({ includeRemoved: true })).toHaveLength(1);
    await wiring.stop();
    fs.unlinkSync(path.join(results(), path.basename(FIXTURE)));
    await start();
    expect(wiring.reader!.listCacheEntries({})).toHaveLength(0);
    expect(wiring.reader!.listCacheEntries({ includeRemoved: true })).toHaveLength(1);
  });
});

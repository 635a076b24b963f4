/**
 * The write side for the cache watcher's events: entry versions, IP history
 * and file-problem findings. Each batch is one transaction. Replaying what a
 * restart finds is harmless: a file whose bytes match its live row only
 * refreshes last_seen, an IP already held by the same container stays one row.
 *
 * The startup scan hands over every file of the node in one batch (tens of
 * thousands of events): such a batch loads the live rows it compares against
 * in one query each instead of one per file, and refreshes last_seen of the
 * unchanged rows in one statement. Small batches (the watcher following a
 * change) look up only the rows they touch.
 */

import type { Database } from 'better-sqlite3';
import type { CacheEntry, CacheEvent, IpAllocation } from '../../collector/index.js';
import { toStoreError } from '../db/index.js';
import { cacheEntryFields } from './cache-entry-fields.js';
import { createFindingsLog, FILE_KINDS_SQL } from '../findings/index.js';
import { goneFromDisk, preloadsLiveRows, reservationChange, versionChange, type OpenReservation } from './cache-write-rules.js';

export interface CacheWriter {
  writeCacheEvents(events: readonly CacheEvent[]): void;
}

interface LiveEntry {
  readonly id: number;
  readonly digest: string;
}

/** A map of rows loaded once for a batch, or a lookup per key; either way kept in step with the batch's own writes. */
interface RowIndex<T> {
  get(key: string): T | undefined;
  set(key: string, row: T): void;
  delete(key: string): void;
}

function rowIndex<T>(preload: (() => Iterable<[string, T]>) | null, lookup: (key: string) => T | undefined): RowIndex<T> {
  if (preload === null) return { get: lookup, set: () => undefined, delete: () => undefined };
  const rows = new Map(preload());
  return { get: (k) => rows.get(k), set: (k, r) => void rows.set(k, r), delete: (k) => void rows.delete(k) };
}

export function createCacheWriter(db: Database, opts: { readonly sinceMs: number }): CacheWriter {
  const findings = createFindingsLog(db);
  const liveByPath = db.prepare<[string], LiveEntry>('SELECT id, digest FROM cache_entries WHERE path = ? AND superseded_at_ms IS NULL AND removed_at_ms IS NULL');
  const allLive = db.prepare<[], LiveEntry & { path: string }>('SELECT path, id, digest FROM cache_entries WHERE superseded_at_ms IS NULL AND removed_at_ms IS NULL');
  // max(): a row touched early in a batch may have been superseded (last_seen set) later in it.
  const touchMany = db.prepare('UPDATE cache_entries SET last_seen_ms = max(last_seen_ms, ?) WHERE id IN (SELECT value FROM json_each(?))');
  const supersede = db.prepare('UPDATE cache_entries SET superseded_at_ms = @at, last_seen_ms = @at WHERE id = @id');
  const remove = db.prepare('UPDATE cache_entries SET removed_at_ms = @at, last_seen_ms = @at WHERE id = @id');
  const insertEntry = db.prepare(`
    INSERT INTO cache_entries (path, dir, format, container_id, network_name, if_name, netns, pod_namespace, pod_name, pod_uid,
      digest, file_mtime_ms, first_seen_ms, last_seen_ms, config_problem, ips_json, cni_args_json, capability_args_json, config_json, result_json, redactions_json)
    VALUES (@path, @dir, @format, @containerId, @networkName, @ifName, @netns, @podNamespace, @podName, @podUid,
      @digest, @mtimeMs, @at, @at, @configProblem, @ips, @cniArgs, @capabilityArgs, @config, @result, @redactions)`);
  const openIp = db.prepare(`
    INSERT INTO ip_history (ip, network, container_id, if_name, pod_namespace, pod_name, source, path, from_ms)
    VALUES (@ip, @network, @containerId, @ifName, @podNamespace, @podName, @source, @path, @from)
    ON CONFLICT (source, path, ip) WHERE to_ms IS NULL DO NOTHING`);
  const closeIps = db.prepare("UPDATE ip_history SET to_ms = @at WHERE source = @source AND path = @path AND to_ms IS NULL");
  const openHostLocal = db.prepare<[string], OpenReservation>("SELECT container_id, if_name FROM ip_history WHERE source = 'host-local' AND path = ? AND to_ms IS NULL");
  const allOpenHostLocal = db.prepare<[], OpenReservation & { path: string }>("SELECT path, container_id, if_name FROM ip_history WHERE source = 'host-local' AND to_ms IS NULL");
  const fileProblemSubjects = db.prepare<[], { subject: string }>(
    `SELECT DISTINCT subject FROM cache_findings WHERE resolved_at_ms IS NULL AND kind IN (${FILE_KINDS_SQL})`,
  );
  const podOfContainer = db.prepare<[string], { pod_namespace: string | null; pod_name: string | null }>(
    'SELECT pod_namespace, pod_name FROM cache_entries WHERE container_id = ? AND pod_name IS NOT NULL ORDER BY id DESC LIMIT 1',
  );
  const fillPods = db.prepare(
    "UPDATE ip_history SET pod_namespace = @ns, pod_name = @name WHERE container_id = @containerId AND to_ms IS NULL AND pod_name IS NULL",
  );
  const liveUnder = db.prepare<[string, string], { id: number; path: string }>(
    "SELECT id, path FROM cache_entries WHERE superseded_at_ms IS NULL AND removed_at_ms IS NULL AND substr(path, 1, length(?) + 1) = ? || '/'",
  );
  const openHostLocalUnder = db.prepare<[string, string], { path: string }>(
    "SELECT DISTINCT path FROM ip_history WHERE source = 'host-local' AND to_ms IS NULL AND substr(path, 1, length(?) + 1) = ? || '/'",
  );

  // Every attachment of a network holds the same config object (the parser shares it): serialised once.
  const configText = new WeakMap<object, string>();
  const configJson = (config: unknown): string | null => {
    if (config === null || config === undefined) return null;
    if (typeof config !== 'object') return JSON.stringify(config);
    let text = configText.get(config);
    if (text === undefined) configText.set(config, (text = JSON.stringify(config)));
    return text;
  };

  /** What one batch (transaction) knows: set up at its start, dropped at its end (with it, on a rollback). */
  interface Batch {
    readonly live: RowIndex<LiveEntry>;
    readonly hostLocal: RowIndex<OpenReservation>;
    /** Paths with an open file problem; null: unknown, try to resolve every time. */
    readonly problemPaths: Set<string> | null;
    /** Unchanged live rows seen again, by the time they were seen. */
    readonly touched: Map<number, number[]>;
  }

  const beginBatch = (size: number): Batch => {
    const large = preloadsLiveRows(size);
    return {
      live: rowIndex(large ? () => allLive.all().map((r) => [r.path, r] as [string, LiveEntry]) : null, (p) => liveByPath.get(p)),
      hostLocal: rowIndex(large ? () => allOpenHostLocal.all().map((r) => [r.path, r] as [string, OpenReservation]) : null, (p) => openHostLocal.get(p)),
      problemPaths: large ? new Set(fileProblemSubjects.all().map((r) => r.subject)) : null,
      touched: new Map(),
    };
  };

  const endBatch = (b: Batch) => {
    for (const [atMs, ids] of b.touched) touchMany.run(atMs, JSON.stringify(ids));
  };

  const resolveFileProblems = (b: Batch, path: string, atMs: number) => {
    if (b.problemPaths !== null && !b.problemPaths.has(path)) return;
    findings.resolveFileProblems(path, atMs);
    b.problemPaths?.delete(path);
  };

  const addVersion = (b: Batch, e: CacheEntry, atMs: number) => {
    const live = b.live.get(e.path);
    resolveFileProblems(b, e.path, atMs);
    const change = versionChange(live, e.digest);
    if (change.kind === 'touch') {
      const ids = b.touched.get(atMs);
      if (ids) ids.push(change.liveId);
      else b.touched.set(atMs, [change.liveId]);
      return;
    }
    if (change.kind === 'replace') {
      supersede.run({ at: atMs, id: change.liveId });
      closeIps.run({ at: atMs, source: 'cache', path: e.path });
    }
    // The plain columns as they are; the structured ones as JSON text.
    const { ips, cniArgs, config, result, ...columns } = cacheEntryFields(e);
    const inserted = insertEntry.run({
      ...columns,
      digest: e.digest,
      mtimeMs: Math.round(e.mtimeMs),
      at: atMs,
      ips: JSON.stringify(ips),
      cniArgs: JSON.stringify(cniArgs),
      capabilityArgs: e.capabilityArgs === null ? null : JSON.stringify(e.capabilityArgs),
      config: configJson(config),
      result: result === null || result === undefined ? null : JSON.stringify(result),
      redactions: e.redactions === undefined ? null : JSON.stringify(e.redactions),
    });
    b.live.set(e.path, { id: Number(inserted.lastInsertRowid), digest: e.digest });
    for (const ip of ips) {
      openIp.run({
        ip,
        network: columns.networkName,
        containerId: columns.containerId,
        ifName: columns.ifName,
        podNamespace: columns.podNamespace,
        podName: columns.podName,
        source: 'cache',
        path: e.path,
        from: atMs,
      });
    }
    if (e.pod && e.containerId) fillPods.run({ ns: e.pod.namespace, name: e.pod.name, containerId: e.containerId });
  };

  const removeVersion = (b: Batch, path: string, atMs: number) => {
    const live = b.live.get(path);
    if (live) remove.run({ at: atMs, id: live.id });
    b.live.delete(path);
    closeIps.run({ at: atMs, source: 'cache', path });
  };

  const release = (b: Batch, path: string, atMs: number) => {
    closeIps.run({ at: atMs, source: 'host-local', path });
    b.hostLocal.delete(path);
  };

  const allocate = (b: Batch, a: IpAllocation, atMs: number) => {
    const change = reservationChange(b.hostLocal.get(a.path), a, atMs);
    if (change.kind === 'unchanged') return;
    if (change.releaseFirst) release(b, a.path, atMs);
    const pod = a.containerId ? podOfContainer.get(a.containerId) : undefined;
    openIp.run({
      ip: a.ip,
      network: a.network,
      containerId: a.containerId,
      ifName: a.ifName,
      podNamespace: pod?.pod_namespace ?? null,
      podName: pod?.pod_name ?? null,
      source: 'host-local',
      path: a.path,
      from: change.fromMs,
    });
    b.hostLocal.set(a.path, { container_id: a.containerId, if_name: a.ifName });
  };

  const reconcile = (b: Batch, dirs: readonly string[], livePaths: readonly string[], atMs: number) => {
    const live = new Set(livePaths);
    for (const dir of dirs) {
      // Gone while cnirec was not watching: removed now, the best time we know.
      for (const row of goneFromDisk(liveUnder.all(dir, dir), live)) removeVersion(b, row.path, atMs);
      for (const row of goneFromDisk(openHostLocalUnder.all(dir, dir), live)) release(b, row.path, atMs);
      findings.resolveFileProblemsUnder(dir, opts.sinceMs, atMs);
    }
  };

  const apply = (b: Batch, ev: CacheEvent) => {
    switch (ev.type) {
      case 'cache.added':
      case 'cache.changed':
        return addVersion(b, ev.entry, ev.atMs);
      case 'cache.removed':
        return removeVersion(b, ev.path, ev.atMs);
      case 'ip.allocated':
        return allocate(b, ev.allocation, ev.atMs);
      case 'ip.released':
        release(b, ev.path, ev.atMs);
        findings.resolve('leaked-ip', ev.path, ev.atMs);
        return;
      case 'cache.problem':
        b.problemPaths?.add(ev.problem.path);
        return findings.open(ev.problem.kind, ev.problem.path, { message: ev.problem.message, path: ev.problem.path }, ev.atMs);
      case 'cache.problem-cleared':
        return resolveFileProblems(b, ev.path, ev.atMs);
      case 'cache.reconciled':
        return reconcile(b, ev.dirs, ev.livePaths, ev.atMs);
    }
  };

  const writeBatch = db.transaction((events: readonly CacheEvent[]) => {
    const b = beginBatch(events.length);
    for (const ev of events) apply(b, ev);
    endBatch(b);
  });

  return {
    writeCacheEvents(events) {
      try {
        writeBatch(events);
      } catch (err) {
        throw toStoreError(err, db.name, 'record CNI cache changes in');
      }
    },
  };
}


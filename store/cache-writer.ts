/**
 * The write side for the cache watcher's events: entry versions, IP history
 * and file-problem findings. Each batch is one transaction. Replaying what a
 * restart finds is harmless: a file whose bytes match its live row only
 * refreshes last_seen, an IP already held by the same container stays one row.
 */

import type { Database } from 'better-sqlite3';
import type { CacheEntry, CacheEvent, IpAllocation } from '../collector/cache/cache-types.js';
import { toStoreError } from './errors.js';
import { createFindingsLog } from './cache-findings.js';

export interface CacheWriter {
  writeCacheEvents(events: readonly CacheEvent[]): void;
}


export function createCacheWriter(db: Database, opts: { readonly sinceMs: number }): CacheWriter {
  const findings = createFindingsLog(db);
  const liveByPath = db.prepare<[string], { id: number; digest: string }>(
    'SELECT id, digest FROM cache_entries WHERE path = ? AND superseded_at_ms IS NULL AND removed_at_ms IS NULL',
  );
  const touch = db.prepare('UPDATE cache_entries SET last_seen_ms = ? WHERE id = ?');
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
  const openHostLocal = db.prepare<[string], { container_id: string | null; if_name: string | null }>(
    "SELECT container_id, if_name FROM ip_history WHERE source = 'host-local' AND path = ? AND to_ms IS NULL",
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

  const addVersion = (e: CacheEntry, atMs: number) => {
    const live = liveByPath.get(e.path);
    findings.resolveFileProblems(e.path, atMs);
    if (live && live.digest === e.digest) {
      touch.run(atMs, live.id);
      return;
    }
    if (live) {
      supersede.run({ at: atMs, id: live.id });
      closeIps.run({ at: atMs, source: 'cache', path: e.path });
    }
    insertEntry.run({
      path: e.path,
      dir: e.dir,
      format: e.format,
      containerId: e.containerId,
      networkName: e.networkName,
      ifName: e.ifName,
      netns: e.netns,
      podNamespace: e.pod?.namespace ?? null,
      podName: e.pod?.name ?? null,
      podUid: e.pod?.uid ?? null,
      digest: e.digest,
      mtimeMs: Math.round(e.mtimeMs),
      at: atMs,
      configProblem: e.configProblem,
      ips: JSON.stringify(e.ips),
      cniArgs: JSON.stringify(e.cniArgs),
      capabilityArgs: e.capabilityArgs === null ? null : JSON.stringify(e.capabilityArgs),
      config: e.config === null || e.config === undefined ? null : JSON.stringify(e.config),
      result: e.result === null || e.result === undefined ? null : JSON.stringify(e.result),
      redactions: e.redactions === undefined ? null : JSON.stringify(e.redactions),
    });
    for (const ip of e.ips) {
      openIp.run({
        ip,
        network: e.networkName,
        containerId: e.containerId,
        ifName: e.ifName,
        podNamespace: e.pod?.namespace ?? null,
        podName: e.pod?.name ?? null,
        source: 'cache',
        path: e.path,
        from: atMs,
      });
    }
    if (e.pod && e.containerId) fillPods.run({ ns: e.pod.namespace, name: e.pod.name, containerId: e.containerId });
  };

  const removeVersion = (path: string, atMs: number) => {
    const live = liveByPath.get(path);
    if (live) remove.run({ at: atMs, id: live.id });
    closeIps.run({ at: atMs, source: 'cache', path });
  };

  const allocate = (a: IpAllocation, atMs: number) => {
    const open = openHostLocal.get(a.path);
    if (open && open.container_id === a.containerId && open.if_name === a.ifName) return;
    if (open) closeIps.run({ at: atMs, source: 'host-local', path: a.path });
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
      // host-local's file mtime is when it reserved the address, also for files found at startup.
      from: open || a.mtimeMs <= 0 ? atMs : Math.min(atMs, Math.round(a.mtimeMs)),
    });
  };

  const reconcile = (dirs: readonly string[], livePaths: readonly string[], atMs: number) => {
    const live = new Set(livePaths);
    for (const dir of dirs) {
      // Gone while cnirec was not watching: removed now, the best time we know.
      for (const row of liveUnder.all(dir, dir)) if (!live.has(row.path)) removeVersion(row.path, atMs);
      for (const row of openHostLocalUnder.all(dir, dir)) if (!live.has(row.path)) closeIps.run({ at: atMs, source: 'host-local', path: row.path });
      findings.resolveFileProblemsUnder(dir, opts.sinceMs, atMs);
    }
  };

  const apply = (ev: CacheEvent) => {
    switch (ev.type) {
      case 'cache.added':
      case 'cache.changed':
        return addVersion(ev.entry, ev.atMs);
      case 'cache.removed':
        return removeVersion(ev.path, ev.atMs);
      case 'ip.allocated':
        return allocate(ev.allocation, ev.atMs);
      case 'ip.released':
        closeIps.run({ at: ev.atMs, source: 'host-local', path: ev.path });
        findings.resolve('leaked-ip', ev.path, ev.atMs);
        return;
      case 'cache.problem':
        return findings.open(ev.problem.kind, ev.problem.path, { message: ev.problem.message, path: ev.problem.path }, ev.atMs);
      case 'cache.problem-cleared':
        return findings.resolveFileProblems(ev.path, ev.atMs);
      case 'cache.reconciled':
        return reconcile(ev.dirs, ev.livePaths, ev.atMs);
    }
  };

  const writeBatch = db.transaction((events: readonly CacheEvent[]) => {
    for (const ev of events) apply(ev);
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


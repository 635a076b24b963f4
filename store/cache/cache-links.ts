/**
 * Ties cache entries to the calls that made and removed them, and derives
 * the findings that need calls and entries together. Calls arrive late
 * (the collector waits out a grace period after a plugin exits) while the
 * cache file appears at once, so linking is retried on a timer over recent
 * rows rather than done once when the file shows up.
 *
 * A call names its network only in its stdin config ("name"); with
 * `--capture light` there is no stdin, and then container id and ifname
 * alone decide.
 */

import type { Database } from 'better-sqlite3';
import { createFindingsLog } from '../findings/index.js';
import { addWithoutCacheFinding, cacheFileWrittenAtMs, detectionWindow, leakedIpFinding, linkWindow, newLink, noLongerFound, staleEntryFinding } from './cache-link-rules.js';

export interface CacheLinkOptions {
  /** How long after the fact a missing link or a condition is still looked for / judged. */
  readonly windowMs?: number;
  /** How long a condition must last before it is a finding (libcni writes the cache right after the chain). */
  readonly graceMs?: number;
  /**
   * True for a container whose attachments the runtime can judge (store/runtime: `leaked-attachment`): its
   * host-local reservations are then not guessed leaked here, and an open guess about them is resolved.
   */
  readonly runtimeJudges?: (containerId: string | null) => boolean;
}

export interface CacheLinker {
  /** Links recent entries to their ADD/DEL calls. */
  link(nowMs: number): void;
  /**
   * Opens and resolves the findings that compare entries with calls and host-local state.
   * `watchedSinceMs`: when the result directories were first read (null: none watched).
   */
  detect(nowMs: number, watchedSinceMs: number | null): void;
}

const NETWORK_OF_STDIN = "CASE WHEN length(c.stdin) > 0 AND json_valid(CAST(c.stdin AS TEXT)) THEN json_extract(CAST(c.stdin AS TEXT), '$.name') END";
// Same network, or no stdin to tell (light capture).
const SAME_NETWORK = `(length(c.stdin) = 0 OR ${NETWORK_OF_STDIN} = @network)`;
/** A successful top-level DEL of call c's attachment, after it: the attachment is gone (calls_by_container). */
const DEL_SUCCEEDED_AFTER = `SELECT 1 FROM calls d
  WHERE d.container_id = c.container_id AND d.ifname = c.ifname AND d.parent_id IS NULL AND d.command = 'DEL' AND d.ok = 1
    AND d.started_at_us > c.started_at_us`;
const TOP_LEVEL = 'c.parent_id IS NULL AND c.is_version_probe = 0 AND c.container_id = @containerId AND c.ifname = @ifName';
/** Clock slack between the file's mtime, our detection time and the tracer's timestamps. */
const SLACK_US = 2_000_000;
/**
 * How far a file's mtime may run behind the moment it was written: the kernel stamps files from a
 * coarse clock that advances once per tick (4 ms at HZ=250, 10 ms at HZ=100). Seen with podman's
 * default chain: the cache file stamped 3.4 ms before the write, 0.5 ms before the last plugin (tuning)
 * even started, and closer to the end of the plugin before it.
 */
const COARSE_MTIME_US = 50_000;

export function createCacheLinker(db: Database, opts: CacheLinkOptions = {}): CacheLinker {
  const windowMs = opts.windowMs ?? 10 * 60_000;
  const graceMs = opts.graceMs ?? 5_000;
  const findings = createFindingsLog(db);

  const addsToLink = db.prepare<
    { since: number; briefly: number; settled: number; relink: number },
    { id: number; container_id: string; if_name: string; network_name: string | null; file_mtime_ms: number; first_seen_ms: number; add_call_id: string | null }
  >(
    // Recent files are retried for the whole window (their ADD may reach the store late); old files found at
    // startup only briefly: their ADD is either in the database already or was never recorded. A file is
    // linked only once it has settled, so every call of its chain has normally been stored: linked earlier, it
    // could take a plugin that ran before the chain's last one. Young links are looked at again (see LinkWindow).
    `SELECT id, container_id, if_name, network_name, file_mtime_ms, first_seen_ms, add_call_id FROM cache_entries
     WHERE container_id IS NOT NULL AND if_name IS NOT NULL AND first_seen_ms <= @settled
       AND ((add_call_id IS NULL AND (file_mtime_ms >= @since OR first_seen_ms >= @briefly)) OR first_seen_ms >= @relink)`,
  );
  // The ADD that started last before the file was written: with a chain, the last plugin's (libcni writes the
  // file once that one returned). Not "the nearest in time": the mtime runs behind (COARSE_MTIME_US), which
  // makes the end of the plugin before the last one look nearer when the last one is quick.
  const findAdd = db.prepare<{ containerId: string; ifName: string; network: string | null; writtenUs: number }, { id: string }>(`
    SELECT c.id FROM calls c
    WHERE ${TOP_LEVEL} AND c.command = 'ADD' AND c.ok = 1 AND ${SAME_NETWORK}
      AND c.started_at_us <= @writtenUs + ${COARSE_MTIME_US}
    ORDER BY c.started_at_us DESC LIMIT 1`);
  const setAdd = db.prepare('UPDATE cache_entries SET add_call_id = ? WHERE id = ?');

  const delsToLink = db.prepare<
    { since: number; settled: number; relink: number },
    { id: number; container_id: string; if_name: string; network_name: string | null; file_mtime_ms: number; removed_at_ms: number; del_call_id: string | null }
  >(
    `SELECT id, container_id, if_name, network_name, file_mtime_ms, removed_at_ms, del_call_id FROM cache_entries
     WHERE removed_at_ms IS NOT NULL AND container_id IS NOT NULL AND if_name IS NOT NULL AND removed_at_ms <= @settled
       AND ((del_call_id IS NULL AND removed_at_ms >= @since) OR removed_at_ms >= @relink)`,
  );
  const findDel = db.prepare<{ containerId: string; ifName: string; network: string | null; writtenUs: number; removedUs: number }, { id: string }>(`
    SELECT c.id FROM calls c
    WHERE ${TOP_LEVEL} AND c.command = 'DEL' AND ${SAME_NETWORK}
      AND c.started_at_us >= @writtenUs - ${SLACK_US} AND c.started_at_us <= @removedUs + ${SLACK_US}
    ORDER BY abs(@removedUs - coalesce(c.ended_at_us, c.started_at_us)) LIMIT 1`);
  const setDel = db.prepare('UPDATE cache_entries SET del_call_id = ? WHERE id = ?');

  // Entries still live although a DEL of theirs succeeded a while ago.
  const staleEntries = db.prepare<
    { beforeUs: number },
    { path: string; container_id: string; network_name: string | null; pod_namespace: string | null; pod_name: string | null; del_id: string }
  >(`
    SELECT e.path, e.container_id, e.network_name, e.pod_namespace, e.pod_name,
      (SELECT c.id FROM calls c
        WHERE c.parent_id IS NULL AND c.is_version_probe = 0 AND c.container_id = e.container_id AND c.ifname = e.if_name
          AND c.command = 'DEL' AND c.ok = 1 AND c.started_at_us > e.file_mtime_ms * 1000 AND c.ended_at_us <= @beforeUs
          AND (length(c.stdin) = 0 OR ${NETWORK_OF_STDIN} = e.network_name)
        ORDER BY c.started_at_us DESC LIMIT 1) AS del_id
    FROM cache_entries e
    WHERE e.superseded_at_ms IS NULL AND e.removed_at_ms IS NULL AND e.container_id IS NOT NULL AND del_id IS NOT NULL`);
  // host-local reservations whose container has no live cache entry.
  const leakedIps = db.prepare<
    { before: number },
    { path: string; ip: string; network: string | null; container_id: string | null; pod_namespace: string | null; pod_name: string | null }
  >(`
    SELECT h.path, h.ip, h.network, h.container_id, p.pod_namespace, p.pod_name FROM ip_history h
    -- host-local's file names no pod: the calls of its container do (calls_by_container).
    LEFT JOIN calls p ON p.id = (SELECT c.id FROM calls c WHERE c.container_id = h.container_id AND c.pod_name IS NOT NULL ORDER BY c.started_at_us DESC LIMIT 1)
    WHERE h.source = 'host-local' AND h.to_ms IS NULL AND h.from_ms <= @before
      AND NOT EXISTS (SELECT 1 FROM cache_entries e
        WHERE e.superseded_at_ms IS NULL AND e.removed_at_ms IS NULL AND e.container_id = h.container_id
          AND (h.if_name IS NULL OR e.if_name IS NULL OR e.if_name = h.if_name))`);
  // Successful top-level ADDs (no delegated ones: those never cache) after which no entry appeared.
  const addsWithoutCache = db.prepare<
    { fromUs: number; toUs: number },
    { id: string; container_id: string; ifname: string; network: string | null; pod_namespace: string | null; pod_name: string | null }
  >(`
    SELECT c.id, c.container_id, c.ifname, ${NETWORK_OF_STDIN} AS network, c.pod_namespace, c.pod_name FROM calls c
    WHERE c.parent_id IS NULL AND c.is_version_probe = 0 AND c.command = 'ADD' AND c.ok = 1
      AND c.container_id IS NOT NULL AND c.container_id != '' AND c.ifname IS NOT NULL
      AND c.ended_at_us >= @fromUs AND c.ended_at_us <= @toUs
      -- Bounds on started_at_us too, so the (command, started_at_us) index serves the scan.
      AND c.started_at_us >= @fromUs - 600000000 AND c.started_at_us <= @toUs
      -- A chain that failed further on is not cached by design: that failure is the story, not the cache.
      AND NOT EXISTS (SELECT 1 FROM calls f
        WHERE f.parent_id IS NULL AND f.container_id = c.container_id AND f.ifname = c.ifname AND f.command = 'ADD' AND f.ok = 0
          AND f.started_at_us >= c.started_at_us AND f.started_at_us <= c.ended_at_us + 10000000)
      AND NOT EXISTS (SELECT 1 FROM cache_entries e
        WHERE e.container_id = c.container_id AND e.if_name = c.ifname
          AND (e.file_mtime_ms * 1000 >= c.started_at_us - ${SLACK_US} OR e.first_seen_ms * 1000 >= c.started_at_us))
      AND NOT EXISTS (${DEL_SUCCEEDED_AFTER})`);
  // The condition ends when a cache file shows up after all, or when the attachment is gone (its DEL succeeded),
  // or when retention deleted the ADD: none of these leaves anything to act on.
  const addWithoutCacheEnded = db.prepare<{ id: string }, { ended: number }>(`
    SELECT NOT EXISTS (SELECT 1 FROM calls c WHERE c.id = @id)
      OR EXISTS (SELECT 1 FROM calls c JOIN cache_entries e ON e.container_id = c.container_id AND e.if_name = c.ifname
        WHERE c.id = @id AND (e.file_mtime_ms * 1000 >= c.started_at_us - ${SLACK_US} OR e.first_seen_ms * 1000 >= c.started_at_us))
      OR EXISTS (SELECT 1 FROM calls c WHERE c.id = @id AND EXISTS (${DEL_SUCCEEDED_AFTER})) AS ended`);

  const link = db.transaction((nowMs: number) => {
    const { since, briefly, settled, relink } = linkWindow(nowMs, windowMs);
    for (const e of addsToLink.all({ since, briefly, settled, relink })) {
      const writtenUs = cacheFileWrittenAtMs(e.file_mtime_ms, e.first_seen_ms) * 1000;
      const add = newLink(findAdd.get({ containerId: e.container_id, ifName: e.if_name, network: e.network_name, writtenUs }), e.add_call_id);
      if (add !== null) setAdd.run(add, e.id);
    }
    for (const e of delsToLink.all({ since, settled, relink })) {
      const found = findDel.get({ containerId: e.container_id, ifName: e.if_name, network: e.network_name, writtenUs: e.file_mtime_ms * 1000, removedUs: e.removed_at_ms * 1000 });
      const del = newLink(found, e.del_call_id);
      if (del !== null) setDel.run(del, e.id);
    }
  });

  const detect = db.transaction((nowMs: number, watchedSinceMs: number | null) => {
    const before = nowMs - graceMs;

    const stale = new Set<string>();
    for (const s of staleEntries.all({ beforeUs: before * 1000 })) {
      stale.add(s.path);
      findings.open('stale-cache-entry', s.path, staleEntryFinding(s), nowMs);
    }
    for (const subject of noLongerFound(findings.openSubjects('stale-cache-entry'), stale)) findings.resolve('stale-cache-entry', subject, nowMs);

    // Without a watched result directory every reservation would look leaked.
    const leaked = new Set<string>();
    if (watchedSinceMs !== null) {
      for (const l of leakedIps.all({ before })) {
        if (opts.runtimeJudges?.(l.container_id)) continue;
        leaked.add(l.path);
        findings.open('leaked-ip', l.path, leakedIpFinding(l), nowMs);
      }
    }
    for (const subject of noLongerFound(findings.openSubjects('leaked-ip'), leaked)) findings.resolve('leaked-ip', subject, nowMs);

    if (watchedSinceMs !== null) {
      for (const a of addsWithoutCache.all(detectionWindow(nowMs, graceMs, windowMs, watchedSinceMs))) findings.open('add-without-cache', a.id, addWithoutCacheFinding(a), nowMs);
      for (const subject of findings.openSubjects('add-without-cache')) {
        if (addWithoutCacheEnded.get({ id: subject })?.ended === 1) findings.resolve('add-without-cache', subject, nowMs);
      }
    }
  });

  return {
    link: (nowMs) => void link(nowMs),
    detect: (nowMs, watchedSinceMs) => void detect(nowMs, watchedSinceMs),
  };
}

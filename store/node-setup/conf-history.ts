/**
 * Conf dir history in SQLite: the write side for the conf dir watcher's
 * events and the read side for the API (a file's versions, one version with
 * its bytes, and the version a call ran with).
 *
 * The version a call ran with is found by query, not stored: the network
 * name libcni put in the call's stdin (`name`), and the version of a file
 * defining that network whose time span holds the call's start. A call
 * captured in light mode has no stdin, so no link.
 */

import type { Database } from 'better-sqlite3';
import type { ConfEvent } from '../../collector/index.js';
import type { ConfFileVersion } from '../../collector/index.js';
import type { StoredConfVersion, StoredConfVersionWithBytes } from './types.js';

export interface ConfHistory {
  write(events: readonly ConfEvent[]): void;
  /** Versions, newest first; of one file when `path` is given. */
  versions(filter: { readonly path?: string; readonly limit: number }): StoredConfVersion[];
  version(id: number): StoredConfVersionWithBytes | null;
  /** The version before `id` of the same file. */
  previousOf(id: number): StoredConfVersionWithBytes | null;
  /** The conf version a call ran with, when its stdin names a network a recorded file defines. */
  versionForCall(callId: string): StoredConfVersion | null;
  /** Versions that took effect at or after `sinceMs`, oldest first. */
  changedSince(sinceMs: number): StoredConfVersion[];
}

const COLUMNS = `id, path, dir, kind, sha256, size_bytes, file_mtime_ms, valid_from_ms, first_seen_ms, superseded_at_ms, removed_at_ms,
  network, cni_version, parse_error, types_json, link_target, redactions_json`;

interface Row {
  id: number;
  path: string;
  dir: string;
  kind: StoredConfVersion['kind'];
  sha256: string | null;
  size_bytes: number;
  file_mtime_ms: number;
  valid_from_ms: number;
  first_seen_ms: number;
  superseded_at_ms: number | null;
  removed_at_ms: number | null;
  network: string | null;
  cni_version: string | null;
  parse_error: string | null;
  types_json: string;
  link_target: string | null;
  redactions_json: string | null;
  bytes?: Buffer | null;
}

const toVersion = (r: Row): StoredConfVersion => ({
  id: r.id,
  path: r.path,
  dir: r.dir,
  kind: r.kind,
  sha256: r.sha256,
  sizeBytes: r.size_bytes,
  fileMtimeMs: r.file_mtime_ms,
  validFromMs: r.valid_from_ms,
  firstSeenMs: r.first_seen_ms,
  supersededAtMs: r.superseded_at_ms,
  removedAtMs: r.removed_at_ms,
  network: r.network,
  cniVersion: r.cni_version,
  parseError: r.parse_error,
  types: JSON.parse(r.types_json) as string[],
  linkTarget: r.link_target,
  redactions: r.redactions_json ? (JSON.parse(r.redactions_json) as string[]) : [],
});

const withBytes = (r: Row): StoredConfVersionWithBytes => ({ ...toVersion(r), bytes: r.bytes ?? null });

export function createConfHistory(db: Database): ConfHistory {
  const live = db.prepare<[string], { id: number; sha256: string | null; kind: string; link_target: string | null; valid_from_ms: number }>(
    'SELECT id, sha256, kind, link_target, valid_from_ms FROM conf_versions WHERE path = ? AND superseded_at_ms IS NULL AND removed_at_ms IS NULL',
  );
  const lastOf = db.prepare<[string], { valid_from_ms: number; removed_at_ms: number | null }>('SELECT valid_from_ms, removed_at_ms FROM conf_versions WHERE path = ? ORDER BY id DESC LIMIT 1');
  const supersede = db.prepare('UPDATE conf_versions SET superseded_at_ms = ? WHERE id = ?');
  const remove = db.prepare('UPDATE conf_versions SET removed_at_ms = ? WHERE id = ?');
  const insert = db.prepare(`
    INSERT INTO conf_versions (path, dir, kind, sha256, size_bytes, file_mtime_ms, valid_from_ms, first_seen_ms, network, cni_version, parse_error, types_json, link_target, redactions_json, bytes)
    VALUES (@path, @dir, @kind, @sha256, @sizeBytes, @mtimeMs, @validFromMs, @atMs, @network, @cniVersion, @parseError, @types, @linkTarget, @redactions, @bytes)`);
  const liveUnder = db.prepare<[string], { id: number; path: string }>(
    "SELECT id, path FROM conf_versions WHERE dir = ? AND superseded_at_ms IS NULL AND removed_at_ms IS NULL",
  );
  const list = db.prepare<{ path: string | null; limit: number }, Row>(
    `SELECT ${COLUMNS} FROM conf_versions WHERE @path IS NULL OR path = @path ORDER BY valid_from_ms DESC, id DESC LIMIT @limit`,
  );
  const one = db.prepare<[number], Row>(`SELECT ${COLUMNS}, bytes FROM conf_versions WHERE id = ?`);
  const previous = db.prepare<[number, number], Row>(`SELECT ${COLUMNS}, bytes FROM conf_versions WHERE path = (SELECT path FROM conf_versions WHERE id = ?) AND id < ? ORDER BY id DESC LIMIT 1`);
  const callNetwork = db.prepare<[string], { network: unknown; started_at_us: number }>(
    "SELECT CASE WHEN json_valid(CAST(stdin AS TEXT)) THEN json_extract(CAST(stdin AS TEXT), '$.name') END AS network, started_at_us FROM calls WHERE id = ?",
  );
  const atTime = db.prepare<{ network: string; atMs: number }, Row>(`
    SELECT ${COLUMNS} FROM conf_versions
    WHERE network = @network AND valid_from_ms <= @atMs AND coalesce(superseded_at_ms, removed_at_ms, 9007199254740991) > @atMs
    ORDER BY valid_from_ms DESC, id DESC LIMIT 1`);
  const since = db.prepare<[number], Row>(`SELECT ${COLUMNS} FROM conf_versions WHERE valid_from_ms >= ? ORDER BY valid_from_ms, id`);

  const writeVersion = (v: ConfFileVersion, atMs: number) => {
    const cur = live.get(v.path);
    if (cur && cur.sha256 === v.sha256 && cur.kind === v.kind && cur.link_target === v.linkTarget) return;
    // It took effect when written (mtime), unless that is older than what it replaced (a copy keeping its
    // mtime) or in the future (a clock ahead): then when it was first seen.
    const last = cur ? { valid_from_ms: cur.valid_from_ms, removed_at_ms: null } : lastOf.get(v.path);
    const floor = last ? Math.max(last.valid_from_ms, last.removed_at_ms ?? 0) : -Infinity;
    const mtime = Math.floor(v.mtimeMs);
    const validFromMs = mtime > floor && mtime <= atMs ? mtime : atMs;
    if (cur) supersede.run(validFromMs, cur.id);
    insert.run({
      path: v.path,
      dir: v.dir,
      kind: v.kind,
      sha256: v.sha256,
      sizeBytes: v.sizeBytes,
      mtimeMs: mtime,
      validFromMs,
      atMs,
      network: v.network,
      cniVersion: v.cniVersion,
      parseError: v.parseError,
      types: JSON.stringify(v.types),
      linkTarget: v.linkTarget,
      redactions: v.redactions.length > 0 ? JSON.stringify(v.redactions) : null,
      bytes: v.bytes,
    });
  };

  const write = db.transaction((events: readonly ConfEvent[]) => {
    for (const ev of events) {
      if (ev.type === 'conf.version') writeVersion(ev.version, ev.atMs);
      else if (ev.type === 'conf.removed') {
        const cur = live.get(ev.path);
        if (cur) remove.run(ev.atMs, cur.id);
      } else {
        // What was recorded under a directory read completely and is not there now went while cnirec was down.
        const present = new Set(ev.livePaths);
        for (const dir of ev.dirs) for (const row of liveUnder.all(dir)) if (!present.has(row.path)) remove.run(ev.atMs, row.id);
      }
    }
  });

  return {
    write: (events) => void write(events),
    versions: (f) => list.all({ path: f.path ?? null, limit: f.limit }).map(toVersion),
    version: (id) => {
      const r = one.get(id);
      return r ? withBytes(r) : null;
    },
    previousOf: (id) => {
      const r = previous.get(id, id);
      return r ? withBytes(r) : null;
    },
    versionForCall(callId) {
      const c = callNetwork.get(callId);
      if (!c || typeof c.network !== 'string') return null;
      const r = atTime.get({ network: c.network, atMs: Math.floor(c.started_at_us / 1000) });
      return r ? toVersion(r) : null;
    },
    changedSince: (sinceMs) => since.all(sinceMs).map(toVersion),
  };
}

/**
 * Plugin binary provenance: each version of each plugin binary a call ran
 * (path, device, inode, size, mtime, sha256), which version each call ran,
 * and what each version reported to VERSION probes (read from the recorded
 * probe's stdout, not stored twice).
 */

import type { Database } from 'better-sqlite3';
import type { BinaryVersion } from '../../collector/index.js';
import type { StoredBinary } from './types.js';

export interface PluginBinaries {
  /** Records that call `callId` (started at `startedAtUs`) ran `version`. */
  link(callId: string, startedAtUs: number, version: BinaryVersion, atMs: number): void;
  /** Every version of every binary, newest first; of one path when given. */
  list(filter: { readonly path?: string; readonly limit: number }): StoredBinary[];
  /** The binary a call ran, when recorded. */
  forCall(callId: string): StoredBinary | null;
  /** The last recorded VERSION probe of each plugin path (any version of it), for the doctor. */
  reportedVersions(): { path: string; supportedVersions: string[]; probedAtMs: number }[];
}

interface Row {
  id: number;
  path: string;
  dev: number;
  ino: number;
  size_bytes: number;
  mtime_ms: number;
  sha256: string | null;
  problem: string | null;
  first_seen_ms: number;
  last_seen_ms: number;
  calls: number;
  probe_id: string | null;
  probe_out: string | null;
  probe_us: number | null;
}

// The latest VERSION probe of a binary version, and its stdout when it is JSON.
const PROBE = `
  (SELECT count(*) FROM call_binaries cb WHERE cb.binary_id = b.id) AS calls,
  p.id AS probe_id, p.started_at_us AS probe_us,
  CASE WHEN p.id IS NOT NULL AND json_valid(CAST(p.stdout AS TEXT)) THEN CAST(p.stdout AS TEXT) END AS probe_out`;
const PROBE_JOIN = `
  LEFT JOIN calls p ON p.id = (
    SELECT c.id FROM call_binaries cb JOIN calls c ON c.id = cb.call_id
    WHERE cb.binary_id = b.id AND c.command = 'VERSION' AND c.ok = 1
    ORDER BY cb.started_at_us DESC LIMIT 1)`;
const COLUMNS = 'b.id, b.path, b.dev, b.ino, b.size_bytes, b.mtime_ms, b.sha256, b.problem, b.first_seen_ms, b.last_seen_ms';

function reported(r: Row): StoredBinary['reported'] {
  if (r.probe_id === null || r.probe_us === null || r.probe_out === null) return null;
  const out = JSON.parse(r.probe_out) as { cniVersion?: unknown; supportedVersions?: unknown };
  const versions = Array.isArray(out.supportedVersions) ? out.supportedVersions.filter((v): v is string => typeof v === 'string') : [];
  return { cniVersion: typeof out.cniVersion === 'string' ? out.cniVersion : null, supportedVersions: versions, callId: r.probe_id, atMs: Math.floor(r.probe_us / 1000) };
}

const toBinary = (r: Row): StoredBinary => ({
  id: r.id,
  path: r.path,
  dev: r.dev,
  ino: r.ino,
  sizeBytes: r.size_bytes,
  mtimeMs: r.mtime_ms,
  sha256: r.sha256,
  problem: r.problem,
  firstSeenMs: r.first_seen_ms,
  lastSeenMs: r.last_seen_ms,
  calls: r.calls,
  reported: reported(r),
});

export function createPluginBinaries(db: Database): PluginBinaries {
  const upsert = db.prepare<{ path: string; dev: number; ino: number; size: number; mtime: number; sha256: string | null; problem: string | null; at: number }, { id: number }>(`
    INSERT INTO plugin_binaries (path, dev, ino, size_bytes, mtime_ms, sha256, problem, first_seen_ms, last_seen_ms)
    VALUES (@path, @dev, @ino, @size, @mtime, @sha256, @problem, @at, @at)
    ON CONFLICT (path, dev, ino, size_bytes, mtime_ms) DO UPDATE SET last_seen_ms = max(last_seen_ms, excluded.last_seen_ms), sha256 = coalesce(sha256, excluded.sha256)
    RETURNING id`);
  const linkCall = db.prepare('INSERT OR REPLACE INTO call_binaries (call_id, binary_id, started_at_us) VALUES (?, ?, ?)');
  const list = db.prepare<{ path: string | null; limit: number }, Row>(
    `SELECT ${COLUMNS}, ${PROBE} FROM plugin_binaries b ${PROBE_JOIN} WHERE @path IS NULL OR b.path = @path ORDER BY b.last_seen_ms DESC, b.id DESC LIMIT @limit`,
  );
  const forCall = db.prepare<[string], Row>(`SELECT ${COLUMNS}, ${PROBE} FROM call_binaries x JOIN plugin_binaries b ON b.id = x.binary_id ${PROBE_JOIN} WHERE x.call_id = ?`);
  // Per path, the newest successful VERSION probe of any of its versions.
  const probes = db.prepare<[], { path: string; out: string; at_us: number }>(`
    SELECT b.path, CAST(c.stdout AS TEXT) AS out, max(c.started_at_us) AS at_us
    FROM call_binaries cb JOIN plugin_binaries b ON b.id = cb.binary_id JOIN calls c ON c.id = cb.call_id
    WHERE c.command = 'VERSION' AND c.ok = 1 AND json_valid(CAST(c.stdout AS TEXT))
    GROUP BY b.path`);

  const link = db.transaction((callId: string, startedAtUs: number, v: BinaryVersion, atMs: number) => {
    const row = upsert.get({ path: v.path, dev: v.dev, ino: v.ino, size: v.sizeBytes, mtime: v.mtimeMs, sha256: v.sha256, problem: v.problem, at: atMs });
    if (row) linkCall.run(callId, row.id, Math.floor(startedAtUs));
  });

  return {
    link: (callId, startedAtUs, v, atMs) => void link(callId, startedAtUs, v, atMs),
    list: (f) => list.all({ path: f.path ?? null, limit: f.limit }).map(toBinary),
    forCall: (callId) => {
      const r = forCall.get(callId);
      return r ? toBinary(r) : null;
    },
    reportedVersions: () =>
      probes.all().flatMap((p) => {
        const out = JSON.parse(p.out) as { supportedVersions?: unknown };
        if (!Array.isArray(out.supportedVersions)) return [];
        return [{ path: p.path, supportedVersions: out.supportedVersions.filter((v): v is string => typeof v === 'string'), probedAtMs: Math.floor(p.at_us / 1000) }];
      }),
  };
}

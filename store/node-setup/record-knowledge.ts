/**
 * What the record adds to `cnirec doctor`: the versions each plugin reported
 * in recorded VERSION probes, and the CNI_PATH values recorded calls ran
 * with (the bin dirs runtimes really pass).
 */

import type { Database } from 'better-sqlite3';
import type { RecordKnowledge } from '../../collector/index.js';
import { createPluginBinaries } from './plugin-binaries.js';

/** CNI_PATH values of the last day's calls are enough to say where runtimes look now. */
const CNI_PATH_WINDOW_MS = 24 * 3_600_000;

export function createRecordKnowledge(db: Database): { read(nowMs: number): RecordKnowledge } {
  const binaries = createPluginBinaries(db);
  const cniPaths = db.prepare<[number], { value: string; calls: number; last_us: number }>(`
    SELECT json_extract(env_json, '$.CNI_PATH') AS value, count(*) AS calls, max(started_at_us) AS last_us
    FROM calls WHERE started_at_us >= ? AND parent_id IS NULL AND is_version_probe = 0 AND json_extract(env_json, '$.CNI_PATH') IS NOT NULL
    GROUP BY value ORDER BY calls DESC LIMIT 20`);
  return {
    read: (nowMs) => ({
      pluginVersions: binaries.reportedVersions(),
      cniPaths: cniPaths.all((nowMs - CNI_PATH_WINDOW_MS) * 1000).map((r) => ({ value: r.value, calls: r.calls, lastAtMs: Math.floor(r.last_us / 1000) })),
    }),
  };
}

/**
 * Two small reads the API makes beside its lists: what a container id
 * prefix names (people copy the 12 characters `cnirec` prints), and what a
 * failed call said about its failure (shown on its line, not only on its page).
 */

import type { Database } from 'better-sqlite3';
import type { ContainerIdMatch, FailureText } from './types.js';

/** Enough of a failed call's output to find its error in: the first bytes of stdout and stderr. */
const HEAD_BYTES = 2048;

export interface CallLookups {
  resolveContainerId(prefix: string): ContainerIdMatch;
  failureTexts(ids: readonly string[]): Map<string, FailureText>;
}

export function createCallLookups(db: Database): CallLookups {
  // Seeks on calls_by_container: a comparison implies container_id IS NOT NULL, which that partial index wants.
  const exact = db.prepare<[string], { n: number }>('SELECT 1 AS n FROM calls WHERE container_id = ? LIMIT 1');
  const atOrAfter = db.prepare<[string], { id: string }>('SELECT container_id AS id FROM calls WHERE container_id >= ? ORDER BY container_id LIMIT 1');
  const after = db.prepare<[string], { id: string }>('SELECT container_id AS id FROM calls WHERE container_id > ? ORDER BY container_id LIMIT 1');
  // Only failed calls (calls_failed), each read once; a CNI error is JSON on stdout (`msg`, `details`).
  const failures = db.prepare<[string], { id: string; msg: unknown; details: unknown; stdout_head: Buffer; stderr_head: Buffer }>(`
    SELECT id,
      CASE WHEN json_valid(CAST(stdout AS TEXT)) THEN json_extract(CAST(stdout AS TEXT), '$.msg') END AS msg,
      CASE WHEN json_valid(CAST(stdout AS TEXT)) THEN json_extract(CAST(stdout AS TEXT), '$.details') END AS details,
      substr(stdout, 1, ${HEAD_BYTES}) AS stdout_head, substr(stderr, 1, ${HEAD_BYTES}) AS stderr_head
    FROM calls WHERE id IN (SELECT value FROM json_each(?)) AND ok = 0`);

  return {
    resolveContainerId(prefix) {
      if (exact.get(prefix)) return { kind: 'exact', containerId: prefix };
      const matches: string[] = [];
      let next = atOrAfter.get(prefix)?.id;
      // Two are enough to know it is ambiguous; a few more make the message useful.
      while (next !== undefined && next.startsWith(prefix) && matches.length < 4) {
        matches.push(next);
        next = after.get(next)?.id;
      }
      if (matches.length === 1) return { kind: 'prefix', containerId: matches[0]! };
      return matches.length === 0 ? { kind: 'none' } : { kind: 'ambiguous', candidates: matches };
    },
    failureTexts(ids) {
      const out = new Map<string, FailureText>();
      if (ids.length === 0) return out;
      for (const r of failures.all(JSON.stringify(ids))) {
        out.set(r.id, {
          msg: typeof r.msg === 'string' ? r.msg : null,
          details: typeof r.details === 'string' ? r.details : null,
          stdoutHead: Buffer.from(r.stdout_head ?? []),
          stderrHead: Buffer.from(r.stderr_head ?? []),
        });
      }
      return out;
    },
  };
}

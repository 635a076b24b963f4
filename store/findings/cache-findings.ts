/**
 * The findings log: one open row per (kind, subject) at a time, its
 * last_seen refreshed while the condition holds, resolved_at set when it
 * stops. A condition that comes back later opens a new row, so the history
 * of each one is kept.
 */

import type { Database } from 'better-sqlite3';
import { CACHE_PROBLEM_KINDS } from '../../collector/index.js';
import type { CacheFindingKind } from './types.js';

export interface FindingFields {
  readonly message: string;
  readonly path?: string | null;
  readonly containerId?: string | null;
  readonly network?: string | null;
  readonly ip?: string | null;
  readonly callId?: string | null;
  /** The pod it is about, when known (from the calls' CNI_ARGS or the cache entry). */
  readonly podNamespace?: string | null;
  readonly podName?: string | null;
  /** How many times it happened, where that means something (a loop's failures). */
  readonly count?: number | null;
}

/** The problem kinds the watcher reports about a file or directory itself. */
export const FILE_PROBLEM_KINDS: readonly CacheFindingKind[] = CACHE_PROBLEM_KINDS;
/** The same kinds as an SQL list, quoted once at load. */
export const FILE_KINDS_SQL = FILE_PROBLEM_KINDS.map((k) => `'${k}'`).join(', ');

export interface FindingsLog {
  open(kind: CacheFindingKind, subject: string, fields: FindingFields, atMs: number): void;
  resolve(kind: CacheFindingKind, subject: string, atMs: number): void;
  /** Resolves whatever file problem is open about `path`. */
  resolveFileProblems(path: string, atMs: number): void;
  /** Subjects of the open findings of `kind`. */
  openSubjects(kind: CacheFindingKind): Set<string>;
  /** File problems under `dir` not seen since `sinceMs`: resolved (a restart found the file fine or gone). */
  resolveFileProblemsUnder(dir: string, sinceMs: number, atMs: number): void;
}

export function createFindingsLog(db: Database): FindingsLog {
  const upsert = db.prepare(`
    INSERT INTO cache_findings (kind, subject, message, path, container_id, network, ip, call_id, pod_namespace, pod_name, count, first_seen_ms, last_seen_ms)
    VALUES (@kind, @subject, @message, @path, @containerId, @network, @ip, @callId, @podNamespace, @podName, @count, @at, @at)
    ON CONFLICT (kind, subject) WHERE resolved_at_ms IS NULL
    DO UPDATE SET last_seen_ms = excluded.last_seen_ms, message = excluded.message, call_id = excluded.call_id, count = excluded.count,
      pod_namespace = coalesce(excluded.pod_namespace, pod_namespace), pod_name = coalesce(excluded.pod_name, pod_name)`);
  const resolve = db.prepare('UPDATE cache_findings SET resolved_at_ms = ? WHERE kind = ? AND subject = ? AND resolved_at_ms IS NULL');
  const resolveFile = db.prepare(`UPDATE cache_findings SET resolved_at_ms = ? WHERE subject = ? AND resolved_at_ms IS NULL AND kind IN (${FILE_KINDS_SQL})`);
  const openOf = db.prepare<[string], { subject: string }>('SELECT subject FROM cache_findings WHERE kind = ? AND resolved_at_ms IS NULL');
  const resolveUnder = db.prepare(
    `UPDATE cache_findings SET resolved_at_ms = @at
     WHERE resolved_at_ms IS NULL AND kind IN (${FILE_KINDS_SQL}) AND last_seen_ms < @since
       AND (subject = @dir OR substr(subject, 1, length(@dir) + 1) = @dir || '/')`,
  );
  return {
    open(kind, subject, f, atMs) {
      upsert.run({
        kind,
        subject,
        message: f.message,
        path: f.path ?? null,
        containerId: f.containerId ?? null,
        network: f.network ?? null,
        ip: f.ip ?? null,
        callId: f.callId ?? null,
        podNamespace: f.podName ? (f.podNamespace ?? null) : null,
        podName: f.podName ?? null,
        count: f.count ?? null,
        at: atMs,
      });
    },
    resolve: (kind, subject, atMs) => void resolve.run(atMs, kind, subject),
    resolveFileProblems: (path, atMs) => void resolveFile.run(atMs, path),
    openSubjects: (kind) => new Set(openOf.all(kind).map((r) => r.subject)),
    resolveFileProblemsUnder: (dir, sinceMs, atMs) => void resolveUnder.run({ dir, since: sinceMs, at: atMs }),
  };
}

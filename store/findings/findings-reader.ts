/**
 * The findings log's read side: its rows, and the groups people look at
 * (one per kind and subject, worst severity first, then most recently seen,
 * paged by keyset with a total). Cache findings and call loops alike.
 */

import type { Database } from 'better-sqlite3';
import { StoreError } from '../db/index.js';
import { FINDING_SEVERITY, severityRankOf, type CacheFindingKind, type FindingFilter, type FindingGroupPage, type FindingGroupQuery, type StoredFinding, type StoredFindingGroup } from './types.js';

export const MAX_FINDINGS_PAGE = 1000;

export interface FindingsReader {
  /** The log's rows, most recently seen first. */
  listFindings(filter: FindingFilter): StoredFinding[];
  /** Groups (kind and subject), worst severity first, then most recently seen; with the total and counts by kind. */
  findingGroups(query: FindingGroupQuery): FindingGroupPage;
  /** Open findings by kind (kinds with none are absent), for /healthz and /metrics. */
  countOpenFindings(): Partial<Record<CacheFindingKind, number>>;
  /** Open findings about these containers (a pod's sandboxes), worst first, then oldest first, by container id. */
  openFindingsByContainer(containerIds: readonly string[]): Map<string, StoredFindingGroup[]>;
  /** One finding, open or resolved; null when there is none (pruned). */
  getFinding(id: number): StoredFinding | null;
}

interface FindingRow {
  id: number;
  kind: CacheFindingKind;
  subject: string;
  message: string;
  path: string | null;
  container_id: string | null;
  network: string | null;
  ip: string | null;
  call_id: string | null;
  pod_namespace: string | null;
  pod_name: string | null;
  count: number | null;
  first_seen_ms: number;
  last_seen_ms: number;
  resolved_at_ms: number | null;
}

interface GroupRow extends FindingRow {
  occurrences: number;
  group_first_ms: number;
}

const COLUMNS = 'id, kind, subject, message, path, container_id, network, ip, call_id, pod_namespace, pod_name, count, first_seen_ms, last_seen_ms, resolved_at_ms';

/** The severity table as SQL, so the database orders and pages by it. Kinds are fixed identifiers, never input. */
const SEVERITY_RANK_SQL = `CASE kind ${Object.entries(FINDING_SEVERITY)
  .map(([kind, severity]) => `WHEN '${kind}' THEN ${severityRankOf(severity)}`)
  .join(' ')} ELSE 9 END`;

/**
 * The latest row of each kind and subject matching the filters, with its group's count and first sighting.
 * Without includeResolved only subjects with an open row are read (cache_findings_open), not the history.
 */
const GROUPS_SQL = `
  WITH matching AS (
    SELECT ${COLUMNS},
      count(*) OVER g AS occurrences,
      min(first_seen_ms) OVER g AS group_first_ms,
      row_number() OVER (PARTITION BY kind, subject ORDER BY resolved_at_ms IS NOT NULL, last_seen_ms DESC, id DESC) AS nth
    FROM cache_findings f
    WHERE (@kinds IS NULL OR kind IN (SELECT value FROM json_each(@kinds)))
      AND (@podName IS NULL OR (pod_namespace = @podNamespace AND pod_name = @podName))
      AND (@containerId IS NULL OR container_id = @containerId)
      AND (@includeResolved = 1 OR EXISTS (SELECT 1 FROM cache_findings o WHERE o.kind = f.kind AND o.subject = f.subject AND o.resolved_at_ms IS NULL))
    WINDOW g AS (PARTITION BY kind, subject)
  )
  SELECT *, ${SEVERITY_RANK_SQL} AS severity_rank FROM matching WHERE nth = 1 AND (@includeResolved = 1 OR resolved_at_ms IS NULL)`;

interface GroupParams {
  kinds: string | null;
  podNamespace: string | null;
  podName: string | null;
  containerId: string | null;
  includeResolved: number;
}

interface PageParams extends GroupParams {
  rank: number | null;
  lastSeen: number | null;
  id: number | null;
  limit: number;
}

function toFinding(r: FindingRow): StoredFinding {
  return {
    id: r.id,
    kind: r.kind,
    subject: r.subject,
    message: r.message,
    path: r.path,
    containerId: r.container_id,
    network: r.network,
    ip: r.ip,
    callId: r.call_id,
    podNamespace: r.pod_namespace,
    podName: r.pod_name,
    count: r.count,
    firstSeenMs: r.first_seen_ms,
    lastSeenMs: r.last_seen_ms,
    resolvedAtMs: r.resolved_at_ms,
  };
}

function toGroup(r: GroupRow): StoredFindingGroup {
  return { ...toFinding(r), severity: FINDING_SEVERITY[r.kind] ?? 'info', occurrences: r.occurrences, groupFirstSeenMs: r.group_first_ms };
}

/** Rows of several containers → each container's, in the rows' order. */
function byContainer(rows: readonly GroupRow[]): Map<string, StoredFindingGroup[]> {
  const out = new Map<string, StoredFindingGroup[]>();
  for (const r of rows) {
    const list = out.get(r.container_id!);
    if (list) list.push(toGroup(r));
    else out.set(r.container_id!, [toGroup(r)]);
  }
  return out;
}

interface CursorKey {
  readonly rank: number;
  readonly lastSeen: number;
  readonly id: number;
}

const encodeCursor = (k: CursorKey): string => Buffer.from(JSON.stringify([k.rank, k.lastSeen, k.id]), 'utf8').toString('base64url');

function decodeCursor(cursor: string, file: string): CursorKey {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = null;
  }
  if (!Array.isArray(parsed) || parsed.length !== 3 || !parsed.every((n) => Number.isSafeInteger(n))) {
    throw new StoreError('invalid-cursor', file, `The cursor "${cursor.slice(0, 40)}" was not issued by this store for findings; start again from the first page.`);
  }
  const [rank, lastSeen, id] = parsed as number[];
  return { rank: rank!, lastSeen: lastSeen!, id: id! };
}

export function createFindingsReader(db: Database): FindingsReader {
  const rowsStmt = db.prepare<{ includeResolved: number; kind: string | null; limit: number }, FindingRow>(`
    SELECT ${COLUMNS} FROM cache_findings
    WHERE (@includeResolved = 1 OR resolved_at_ms IS NULL) AND (@kind IS NULL OR kind = @kind)
    ORDER BY last_seen_ms DESC, id DESC LIMIT @limit`);
  const byIdStmt = db.prepare<[number], FindingRow>(`SELECT ${COLUMNS} FROM cache_findings WHERE id = ?`);
  const openCountsStmt = db.prepare<[], { kind: CacheFindingKind; n: number }>(
    'SELECT kind, count(*) AS n FROM cache_findings WHERE resolved_at_ms IS NULL GROUP BY kind',
  );
  // Open findings are few (the node's current troubles): the ids go in as one JSON array, one query per story.
  const openByContainerStmt = db.prepare<[string], GroupRow>(`
    SELECT ${COLUMNS},
      (SELECT count(*) FROM cache_findings h WHERE h.kind = f.kind AND h.subject = f.subject) AS occurrences,
      (SELECT min(h.first_seen_ms) FROM cache_findings h WHERE h.kind = f.kind AND h.subject = f.subject) AS group_first_ms
    FROM cache_findings f
    WHERE resolved_at_ms IS NULL AND container_id IN (SELECT value FROM json_each(?))
    ORDER BY ${SEVERITY_RANK_SQL}, first_seen_ms, id`);
  const pageStmt = db.prepare<PageParams, GroupRow & { severity_rank: number }>(`
    SELECT * FROM (${GROUPS_SQL})
    WHERE @rank IS NULL OR severity_rank > @rank
      OR (severity_rank = @rank AND (last_seen_ms < @lastSeen OR (last_seen_ms = @lastSeen AND id < @id)))
    ORDER BY severity_rank, last_seen_ms DESC, id DESC LIMIT @limit`);
  const countsStmt = db.prepare<GroupParams, { kind: CacheFindingKind; n: number }>(`SELECT kind, count(*) AS n FROM (${GROUPS_SQL}) GROUP BY kind`);

  // Both in one snapshot, so the total agrees with the page.
  const groups = db.transaction((q: FindingGroupQuery): FindingGroupPage => {
    const after = q.cursor ? decodeCursor(q.cursor, db.name) : null;
    const limit = Math.min(Math.max(1, Math.floor(q.limit) || 1), MAX_FINDINGS_PAGE);
    const params: GroupParams = {
      kinds: q.kinds && q.kinds.length > 0 ? JSON.stringify(q.kinds) : null,
      podNamespace: q.pod?.namespace ?? null,
      podName: q.pod?.name ?? null,
      containerId: q.containerId ?? null,
      includeResolved: q.includeResolved ? 1 : 0,
    };
    // One row more than asked tells whether another page exists.
    const rows = pageStmt.all({ ...params, rank: after?.rank ?? null, lastSeen: after?.lastSeen ?? null, id: after?.id ?? null, limit: limit + 1 });
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    const last = page.at(-1);
    const byKind = Object.fromEntries(countsStmt.all(params).map((r) => [r.kind, r.n])) as Partial<Record<CacheFindingKind, number>>;
    return {
      items: page.map(toGroup),
      total: Object.values(byKind).reduce((a, b) => a + b, 0),
      byKind,
      nextCursor: more && last ? encodeCursor({ rank: last.severity_rank, lastSeen: last.last_seen_ms, id: last.id }) : null,
    };
  });

  return {
    listFindings: (f) =>
      rowsStmt.all({ includeResolved: f.includeResolved ? 1 : 0, kind: f.kind ?? null, limit: Math.min(f.limit ?? MAX_FINDINGS_PAGE, MAX_FINDINGS_PAGE) }).map(toFinding),
    findingGroups: (q) => groups(q),
    countOpenFindings: () => Object.fromEntries(openCountsStmt.all().map((r) => [r.kind, r.n])),
    openFindingsByContainer: (containerIds) => (containerIds.length === 0 ? new Map() : byContainer(openByContainerStmt.all(JSON.stringify(containerIds)))),
    getFinding: (id) => {
      const row = byIdStmt.get(id);
      return row === undefined ? null : toFinding(row);
    },
  };
}

/** The read side for cache entries, IP history and findings (the API's queries). */

import type { Database } from 'better-sqlite3';
import type { CacheFindingKind, FindingFilter, StoredFinding } from '../findings/index.js';
import type { CacheEntryFilter, StoredCacheEntry, StoredIpHolding } from './cache-types.js';

export const MAX_CACHE_PAGE = 1000;

interface EntryRow {
  id: number;
  path: string;
  dir: string;
  format: 'cniCacheV1' | 'legacy';
  container_id: string | null;
  network_name: string | null;
  if_name: string | null;
  netns: string | null;
  pod_namespace: string | null;
  pod_name: string | null;
  pod_uid: string | null;
  ips_json: string;
  cni_args_json: string;
  capability_args_json: string | null;
  config_json: string | null;
  config_problem: string | null;
  result_json: string | null;
  file_mtime_ms: number;
  first_seen_ms: number;
  last_seen_ms: number;
  superseded_at_ms: number | null;
  removed_at_ms: number | null;
  add_call_id: string | null;
  del_call_id: string | null;
  redactions_json: string | null;
}

/** Rows of several containers (selected by container id, so never null there) → each container's, in the rows' order. */
function byContainer<R extends { container_id: string | null }, T>(rows: readonly R[], to: (r: R) => T): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of rows) {
    const list = out.get(r.container_id!);
    if (list) list.push(to(r));
    else out.set(r.container_id!, [to(r)]);
  }
  return out;
}

const parseOrNull = (s: string | null): unknown => (s === null ? null : JSON.parse(s));

function toEntry(r: EntryRow): StoredCacheEntry {
  return {
    id: r.id,
    path: r.path,
    dir: r.dir,
    format: r.format,
    containerId: r.container_id,
    networkName: r.network_name,
    ifName: r.if_name,
    netns: r.netns,
    podNamespace: r.pod_namespace,
    podName: r.pod_name,
    podUid: r.pod_uid,
    ips: JSON.parse(r.ips_json) as string[],
    cniArgs: JSON.parse(r.cni_args_json) as [string, string][],
    capabilityArgs: parseOrNull(r.capability_args_json),
    config: parseOrNull(r.config_json),
    configProblem: r.config_problem,
    result: parseOrNull(r.result_json),
    fileMtimeMs: r.file_mtime_ms,
    firstSeenMs: r.first_seen_ms,
    lastSeenMs: r.last_seen_ms,
    supersededAtMs: r.superseded_at_ms,
    removedAtMs: r.removed_at_ms,
    addCallId: r.add_call_id,
    delCallId: r.del_call_id,
    redactions: r.redactions_json === null ? [] : (JSON.parse(r.redactions_json) as string[]),
  };
}

export interface CacheReader extends FindingsReader {
  /** Newest first. */
  listCacheEntries(filter: CacheEntryFilter): StoredCacheEntry[];
  /** Every version ever seen for one container (removed and superseded too), oldest first: the call and pod views pick from these. */
  entriesForContainer(containerId: string): StoredCacheEntry[];
  /** The same for several containers (a pod's sandboxes) in one query, by container id; containers without entries are absent. */
  entriesByContainer(containerIds: readonly string[]): Map<string, StoredCacheEntry[]>;
  /** Every holder of `ip`, oldest first. */
  ipHistory(ip: string): StoredIpHolding[];
}

/** The findings log's read side: cache findings and the call loops (store/findings/call-loops.ts) alike. */
export interface FindingsReader {
  /** Most recently seen first. */
  listFindings(filter: FindingFilter): StoredFinding[];
  /** Open findings by kind (kinds with none are absent), for /healthz and /metrics. */
  countOpenFindings(): Partial<Record<CacheFindingKind, number>>;
  /** Open findings about these containers (a pod's sandboxes), oldest first, by container id. */
  openFindingsByContainer(containerIds: readonly string[]): Map<string, StoredFinding[]>;
  /** One finding, open or resolved; null when there is none (pruned). */
  getFinding(id: number): StoredFinding | null;
}

export function createCacheReader(db: Database): CacheReader {
  const ipStmt = db.prepare<
    [string],
    {
      ip: string;
      network: string | null;
      container_id: string | null;
      if_name: string | null;
      pod_namespace: string | null;
      pod_name: string | null;
      source: 'host-local' | 'cache';
      path: string;
      from_ms: number;
      to_ms: number | null;
    }
  >('SELECT ip, network, container_id, if_name, pod_namespace, pod_name, source, path, from_ms, to_ms FROM ip_history WHERE ip = ? ORDER BY from_ms, id');

  // The limit is written into the SQL, not bound: with a bound LIMIT SQLite
  // sets up its sorter for the general case, and this lookup, made once per
  // sandbox of a pod's story, cost 45 µs instead of 5 on an empty table.
  const byContainerStmt = db.prepare<[string], EntryRow>(
    `SELECT * FROM cache_entries WHERE container_id = ? ORDER BY first_seen_ms, id LIMIT ${MAX_CACHE_PAGE}`,
  );

  // A story's sandboxes, one query instead of one per sandbox (a StatefulSet name reused all week has 65):
  // each container keeps its own oldest MAX_CACHE_PAGE, as entriesForContainer does.
  const byContainersStmt = db.prepare<[string], EntryRow>(`
    SELECT * FROM (
      SELECT *, row_number() OVER (PARTITION BY container_id ORDER BY first_seen_ms, id) AS nth
      FROM cache_entries WHERE container_id IN (SELECT value FROM json_each(?))
    ) WHERE nth <= ${MAX_CACHE_PAGE} ORDER BY container_id, first_seen_ms, id`);

  return {
    ...createFindingsReader(db),
    entriesForContainer: (containerId) => byContainerStmt.all(containerId).map(toEntry),
    entriesByContainer: (containerIds) => (containerIds.length === 0 ? new Map() : byContainer(byContainersStmt.all(JSON.stringify(containerIds)), toEntry)),
    listCacheEntries(f) {
      const where: string[] = [];
      const args: Record<string, string | number> = { limit: Math.min(f.limit ?? MAX_CACHE_PAGE, MAX_CACHE_PAGE) };
      if (!f.includeRemoved) where.push('superseded_at_ms IS NULL AND removed_at_ms IS NULL');
      if (f.containerId !== undefined) {
        where.push('container_id = @containerId');
        args.containerId = f.containerId;
      }
      if (f.network !== undefined) {
        where.push('network_name = @network');
        args.network = f.network;
      }
      if (f.podNamespace !== undefined) {
        where.push('pod_namespace = @podNamespace');
        args.podNamespace = f.podNamespace;
      }
      if (f.podName !== undefined) {
        where.push('pod_name = @podName');
        args.podName = f.podName;
      }
      const sql = `SELECT * FROM cache_entries ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY first_seen_ms DESC, id DESC LIMIT @limit`;
      return (db.prepare(sql).all(args) as EntryRow[]).map(toEntry);
    },
    ipHistory: (ip) =>
      ipStmt.all(ip).map((r) => ({
        ip: r.ip,
        network: r.network,
        containerId: r.container_id,
        ifName: r.if_name,
        podNamespace: r.pod_namespace,
        podName: r.pod_name,
        source: r.source,
        path: r.path,
        fromMs: r.from_ms,
        toMs: r.to_ms,
      })),
  };
}

interface FindingRow {
  id: number;
  kind: CacheFindingKind;
  message: string;
  path: string | null;
  container_id: string | null;
  network: string | null;
  ip: string | null;
  call_id: string | null;
  first_seen_ms: number;
  last_seen_ms: number;
  resolved_at_ms: number | null;
}

const FINDING_COLUMNS = 'id, kind, message, path, container_id, network, ip, call_id, first_seen_ms, last_seen_ms, resolved_at_ms';

function toFinding(r: FindingRow): StoredFinding {
  return {
    id: r.id,
    kind: r.kind,
    message: r.message,
    path: r.path,
    containerId: r.container_id,
    network: r.network,
    ip: r.ip,
    callId: r.call_id,
    firstSeenMs: r.first_seen_ms,
    lastSeenMs: r.last_seen_ms,
    resolvedAtMs: r.resolved_at_ms,
  };
}

export function createFindingsReader(db: Database): FindingsReader {
  const findingsStmt = db.prepare<{ includeResolved: number; kind: string | null; limit: number }, FindingRow>(`
    SELECT ${FINDING_COLUMNS} FROM cache_findings
    WHERE (@includeResolved = 1 OR resolved_at_ms IS NULL) AND (@kind IS NULL OR kind = @kind)
    ORDER BY last_seen_ms DESC, id DESC LIMIT @limit`);
  const openCountsStmt = db.prepare<[], { kind: CacheFindingKind; n: number }>(
    'SELECT kind, count(*) AS n FROM cache_findings WHERE resolved_at_ms IS NULL GROUP BY kind',
  );
  // Open findings are few (the node's current troubles): the ids go in as one JSON array, one query per story.
  const openByContainerStmt = db.prepare<[string], FindingRow>(`
    SELECT ${FINDING_COLUMNS} FROM cache_findings
    WHERE resolved_at_ms IS NULL AND container_id IN (SELECT value FROM json_each(?))
    ORDER BY first_seen_ms, id`);
  const byIdStmt = db.prepare<[number], FindingRow>(`SELECT ${FINDING_COLUMNS} FROM cache_findings WHERE id = ?`);
  return {
    countOpenFindings: () => Object.fromEntries(openCountsStmt.all().map((r) => [r.kind, r.n])),
    listFindings: (f) =>
      findingsStmt.all({ includeResolved: f.includeResolved ? 1 : 0, kind: f.kind ?? null, limit: Math.min(f.limit ?? MAX_CACHE_PAGE, MAX_CACHE_PAGE) }).map(toFinding),
    openFindingsByContainer: (containerIds) =>
      containerIds.length === 0 ? new Map() : byContainer(openByContainerStmt.all(JSON.stringify(containerIds)), toFinding),
    getFinding: (id) => {
      const row = byIdStmt.get(id);
      return row === undefined ? null : toFinding(row);
    },
  };
}

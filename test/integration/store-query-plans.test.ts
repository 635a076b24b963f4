// The indexes the API's queries rely on, pinned with SQLite's EXPLAIN QUERY
// PLAN on a real database file (schema and planner hints as the daemon opens
// it): a list never sorts in a temporary B-tree and walks the index made for
// its filter, and a pod's graph is read with set queries on the right
// indexes. A change that makes SQLite pick another plan fails here, not in
// a benchmark weeks later.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALL_LOOP_SQL } from '../../store/findings/call-loops.js';
import { listCallsQuery } from '../../store/calls/call-reader.js';
import { CALLS_PLANNER_HINTS } from '../../store/db/planner-hints.js';
import { POD_GRAPH_SQL } from '../../store/calls/pod-calls.js';
import { RETENTION_CALL_SQL } from '../../store/retention/retention-prune.js';
import { openDatabase, type Database } from '../../store/db/open-database.js';
import type { CallFilter } from '../../store/calls/types.js';

let dir: string;
let db: Database;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cnirec-plans-'));
  db = openDatabase(path.join(dir, 'calls.db'));
});

afterAll(() => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function plan(sql: string, params: unknown[]): string {
  const rows = db.prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`).all(...params);
  return rows.map((r) => r.detail).join(' / ');
}

const listPlan = (filter: CallFilter, after: { startedAtUs: number; id: string } | null = null) => {
  const { sql, params } = listCallsQuery(filter, after);
  return plan(sql, [...params, 101]);
};

describe('list queries', () => {
  it.each<[string, CallFilter, string]>([
    ['no filter', {}, 'SCAN calls USING INDEX calls_by_started'],
    ['namespace and pod', { namespace: 'web', pod: 'nginx' }, 'SEARCH calls USING INDEX calls_by_pod (pod_namespace=? AND pod_name=?)'],
    ['namespace alone', { namespace: 'web' }, 'SEARCH calls USING INDEX calls_by_namespace (pod_namespace=?)'],
    ['pod uid', { podUid: 'u' }, 'SEARCH calls USING INDEX calls_by_pod_uid (pod_uid=?)'],
    ['container id', { containerId: 'c' }, 'SEARCH calls USING INDEX calls_by_container (container_id=?)'],
    ['command', { command: 'ADD' }, 'SEARCH calls USING INDEX calls_by_command (command=?)'],
    ['failed with a command', { command: 'ADD', failed: true }, 'SEARCH calls USING INDEX calls_failed_by_command (command=?)'],
    ['failed alone', { failed: true }, 'SCAN calls USING INDEX calls_failed'],
    ['plugin', { plugin: 'bridge' }, 'SEARCH calls USING INDEX calls_by_plugin (plugin=?)'],
    ['plugin and minimum duration', { plugin: 'bridge', minDurationUs: 200_000 }, 'SEARCH calls USING INDEX calls_by_plugin (plugin=?)'],
    ['minimum duration alone', { minDurationUs: 200_000 }, 'SCAN calls USING INDEX calls_by_started'],
    ['since', { sinceUs: 1 }, 'SEARCH calls USING INDEX calls_by_started (started_at_us>?)'],
    ['until', { untilUs: 1 }, 'SEARCH calls USING INDEX calls_by_started (started_at_us<?)'],
    ['running', { status: 'running' }, 'SCAN calls USING INDEX calls_running'],
    ['network', { network: 'podnet' }, 'SEARCH calls USING INDEX calls_by_network (network=?)'],
    ['STATUS heartbeats', { command: 'STATUS' }, 'SEARCH calls USING INDEX calls_by_command (command=?)'],
  ])('%s walks its index in list order', (_name, filter, expected) => {
    expect(listPlan(filter)).toBe(expected);
  });

  it('a later page seeks the same index to the cursor', () => {
    expect(listPlan({ command: 'ADD', failed: true }, { startedAtUs: 5, id: 'x' })).toMatch(/^SEARCH calls USING INDEX calls_failed_by_command \(command=\?/);
    expect(listPlan({}, { startedAtUs: 5, id: 'x' })).toBe('SEARCH calls USING INDEX calls_by_started ((started_at_us,id)<(?,?))');
  });

  it('never sorts a list in a temporary B-tree, whatever the filters', () => {
    const fields: CallFilter[] = [{ namespace: 'n' }, { command: 'DEL' }, { plugin: 'x' }, { failed: true }, { minDurationUs: 1 }, { sinceUs: 1 }, { containerId: 'c' }];
    for (let mask = 0; mask < 1 << fields.length; mask++) {
      const filter = Object.assign({}, ...fields.filter((_, i) => mask & (1 << i))) as CallFilter;
      expect(listPlan(filter), JSON.stringify(filter)).not.toContain('TEMP B-TREE');
    }
  });

  it('sorts only the calls of one pod name when the namespace is not given', () => {
    // A pod name holds a few hundred calls at most: skip-scanning calls_by_pod and sorting those
    // costs less than another index on every insert.
    expect(listPlan({ pod: 'p' })).toBe('SEARCH calls USING INDEX calls_by_pod (ANY(pod_namespace) AND pod_name=?) / USE TEMP B-TREE FOR ORDER BY');
  });
});

describe("a pod's graph", () => {
  it.each<[keyof typeof POD_GRAPH_SQL, unknown[], string]>([
    ['podCalls', ['web', 'nginx', 0, 1], 'SEARCH calls USING INDEX calls_by_pod (pod_namespace=? AND pod_name=? AND started_at_us>? AND started_at_us<?)'],
    ['podCallsOfUid', ['uid-1', 'web', 'nginx', 0, 1], 'SEARCH calls USING INDEX calls_by_pod_uid (pod_uid=? AND started_at_us>? AND started_at_us<?)'],
    ['childIds', ['["a"]'], 'SEARCH calls USING COVERING INDEX calls_by_parent (parent_id=?)'],
    ['byIds', ['["a"]'], 'SEARCH calls USING INDEX sqlite_autoindex_calls_1 (id=?)'],
    ['helpers', ['["a"]'], 'SEARCH helpers USING INDEX helpers_by_call (call_id=?)'],
  ])('%s uses its index', (name, params, expected) => {
    expect(plan(POD_GRAPH_SQL[name], params)).toContain(expected);
  });
});

describe('DEL/ADD loop findings', () => {
  const named = (sql: string, params: Record<string, unknown>) => db.prepare<[Record<string, unknown>], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`).all(params).map((r) => r.detail).join(' / ');
  // One container's calls or one pod name's: either container index serves (which one depends on the statistics).
  const ONE_CONTAINER = /SEARCH (s|calls) USING INDEX calls_(top_level_)?by_container \(container_id=\?/;
  const ONE_POD = /SEARCH (s|calls) USING INDEX calls_by_pod \(pod_namespace=\? AND pod_name=\?/;
  it.each<[keyof typeof CALL_LOOP_SQL, RegExp]>([
    ['delLoops', ONE_CONTAINER],
    ['addLoops', ONE_POD],
  ])("%s reads only the window's failures, then one index range per failure", (name, perFailure) => {
    const p = named(CALL_LOOP_SQL[name], { sinceUs: 0, min: 3 });
    expect(p).toContain('SEARCH c USING INDEX calls_failed_by_command (command=? AND started_at_us>?)');
    expect(p).toMatch(perFailure);
  });
  it.each<[keyof typeof CALL_LOOP_SQL, unknown[], RegExp]>([
    ['lastDelFailure', ['c', 'eth0'], ONE_CONTAINER],
    ['lastAddFailure', ['web', 'nginx', 'u', 'eth0'], ONE_POD],
  ])('%s uses its index', (name, params, expected) => {
    expect(plan(CALL_LOOP_SQL[name], params)).toMatch(expected);
  });
});

describe('retention', () => {
  const ASKS_TIMELINE = new Set<keyof typeof RETENTION_CALL_SQL>(['statusRoots', 'timelineStatusRoots', 'statusThrough']);
  it.each<[keyof typeof RETENTION_CALL_SQL, unknown[], string]>([
    ['roots', [1, 0, '', 10], 'SEARCH c USING INDEX calls_by_started ((started_at_us,id)>(?,?) AND started_at_us<?)'],
    // The size limit's STATUS passes walk only STATUS calls, and ask the timeline by index.
    ['statusRoots', [1, 0, '', 10], 'SEARCH c USING INDEX calls_by_command (command=? AND (started_at_us,id)>(?,?) AND started_at_us<?)'],
    ['timelineStatusRoots', [1, 0, '', 10], 'SEARCH c USING INDEX calls_by_command (command=? AND (started_at_us,id)>(?,?) AND started_at_us<?)'],
    // The per-network cap reads only the small index of top-level STATUS calls.
    ['firstStatusNetwork', [], 'SEARCH calls USING COVERING INDEX calls_status_by_network (network>?)'],
    ['nextStatusNetwork', ['a'], 'SEARCH calls USING COVERING INDEX calls_status_by_network (network>?)'],
    ['statusOverflow', [null, 5], 'SEARCH calls USING COVERING INDEX calls_status_by_network (network=?)'],
    ['statusThrough', ['n', 1, 'a', 0, '', 10], 'SEARCH c USING COVERING INDEX calls_status_by_network (network=? AND (started_at_us,id)>(?,?) AND (started_at_us,id)<(?,?))'],
  ])('%s uses its index', (name, params, expected) => {
    const p = plan(RETENTION_CALL_SQL[name], params);
    expect(p).toContain(expected);
    expect(p).not.toContain('TEMP B-TREE');
    if (ASKS_TIMELINE.has(name)) expect(p).toContain('USING COVERING INDEX cni_readiness_transitions_by_call (call_id=?)');
  });
});

describe('planner hints', () => {
  it('are what the planner reads for every calls index the schema has', () => {
    const stats = new Map(db.prepare<[], { idx: string; stat: string }>("SELECT idx, stat FROM sqlite_stat1 WHERE tbl = 'calls'").all().map((r) => [r.idx, r.stat]));
    const indexes = db.prepare<[], { name: string }>("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'calls'").all().map((r) => r.name);
    for (const idx of indexes) if (idx in CALLS_PLANNER_HINTS) expect(stats.get(idx), idx).toBe(CALLS_PLANNER_HINTS[idx]);
    // Every index of the calls table has a hint, except the cache links' own (sampled by ANALYZE).
    expect(indexes.filter((i) => !(i in CALLS_PLANNER_HINTS))).toEqual(['calls_top_level_by_container']);
  });
});

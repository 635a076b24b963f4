/**
 * Diagnostics for the API latency benchmark: each scenario's queries run
 * straight against the store in this process (a second, read-only
 * connection to the daemon's file, no HTTP), in three steps that add up to
 * what a route does before its reply leaves:
 *
 *   store    the store call(s) alone: SQLite and row decoding
 *   json     + the route's mapping (summaryFromStored, buildPodStory,
 *            presentCallDetail) and plain JSON.stringify (each body is
 *            also checked against its response schema in the untimed
 *            warm-up)
 *   route    what the route itself runs before its reply leaves, from
 *            its parsed query to the bytes it sends: the read op of
 *            api/reads/read-ops.ts (the same function the daemon calls,
 *            with its own serializer: encodePodStory for the story, the
 *            response schema's encode for the call detail)
 *
 * plus SQLite's query plan for each statement. Set against the HTTP numbers
 * they tell whether SQLite, the response building or the HTTP stack
 * dominates a scenario's latency.
 */

import BetterSqlite3 from 'better-sqlite3';
import { z } from 'zod';
import { presentCallDetail } from '../api/present/call-detail.js';
import { buildPodStory } from '../api/present/pod-story.js';
import { createReadOps } from '../api/read-ops.js';
import { callDetailSchema } from '../api/schemas/call-detail.js';
import { callPageSchema } from '../api/schemas/call-list.js';
import { toCallFilter } from '../api/present/call-filter.js';
import { callListQuerySchema, type CallListQuery } from '../api/schemas/call-query.js';
import { presentStoredSummaries } from '../api/present/call-error.js';
import { podStorySchema } from '../api/schemas/pod-story.js';
import { createCacheReader } from '../store/cache/cache-reader.js';
import { SUMMARY_COLUMNS } from '../store/calls/call-decode.js';
import { listCallsQuery } from '../store/calls/call-reader.js';
import { decodeCursor } from '../store/calls/cursor.js';
import { POD_GRAPH_SQL } from '../store/calls/pod-calls.js';
import { createCallStore, type CallFilter, type CallPage, type PodCallScope } from '../store/index.js';
import { PAGE_LIMIT, PAGES_DEEP, type ScenarioContext } from './api-latency-http.js';
import type { PodName } from './api-latency-data.js';
import { distribution, type Distribution } from './lib/stats.js';

export interface StoreDiagnostic {
  readonly scenario: string;
  /** Timed queries per step. */
  readonly queries: number;
  readonly storeMs: Distribution;
  readonly storeAndJsonMs: Distribution;
  readonly storeAndRouteMs: Distribution;
  /** Rows the store call returned (pod: calls in the story, with delegated ones). */
  readonly rowsPerQuery: number;
  /** EXPLAIN QUERY PLAN of the SQL the store runs, per statement. */
  readonly plans: Record<string, string[]>;
  /**
   * Lists served by walking an index in order: how many index entries (each a
   * table row looked up and tested) the walk passes to fill one page, counted
   * for one representative query. Null where that does not apply.
   */
  readonly rowsVisitedPerPage: number | null;
  /** The same count for another index that could serve the query, by index name. */
  readonly rowsVisitedByOtherIndexes: Record<string, number | null>;
}

const DAY_US = 86_400_000_000;
type Mode = 'store' | 'json' | 'route';

/** One request of an iteration, two ways: the store call alone (rows, and the mapped body lazily), and the route's read op. */
interface Query {
  store(): { rows: number; body: () => unknown };
  route(): Buffer | string;
}

interface Probe {
  readonly scenario: string;
  /** The response schema the body must fit (checked in the untimed warm-up). */
  readonly schema: z.ZodType;
  /** The queries of one iteration, run in order (paging: one per page). */
  iteration(): Query[];
  plans(): Record<string, string[]>;
  visited?(): number | null;
  otherIndexes?(): Record<string, number | null>;
}

/** Runs `iterations` iterations per scenario and step (at most `maxSecondsPerStep`), after a few untimed ones. */
export function diagnoseStore(
  dbFile: string,
  ctx: ScenarioContext,
  pageSize: number,
  iterations: number,
  maxSecondsPerStep: number,
  rnd: () => number,
): StoreDiagnostic[] {
  const db = new BetterSqlite3(dbFile, { readonly: true, fileMustExist: true });
  try {
    const store = createCallStore(db);
    const explain = (sql: string, params: unknown[]): string[] =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map((r) => r.detail);
    // The statement call-reader.ts builds for listCalls, to ask SQLite how it runs it.
    const listPlan = (filter: CallFilter, limit: number, cursor?: string): string[] => {
      const { sql, params } = listCallsQuery(filter, cursor ? decodeCursor(cursor, dbFile) : null);
      return explain(sql, [...params, limit + 1]);
    };
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    // The daemon's read ops over this connection, caches watched as the daemon does by default.
    const cache = createCacheReader(db);
    const ops = createReadOps({ store, cache, findings: null });
    const storySources = { cache, findings: cache };

    // A list as the route gets it: the query string's parameters through the route's schema.
    const listQueryOf = (params: Record<string, string>): CallListQuery => callListQuerySchema.parse(params);
    const pageBody = (page: CallPage) => () => ({ items: presentStoredSummaries(page.items, store), nextCursor: page.nextCursor });
    const listQuery = (params: Record<string, string>): Query => {
      const q = listQueryOf(params);
      return {
        store: () => {
          const page = store.listCalls(toCallFilter(q), q.limit, q.cursor ?? null);
          return { rows: page.items.length, body: pageBody(page) };
        },
        route: () => ops.callPage(q),
      };
    };
    const listPlanOf = (params: Record<string, string>): string[] => {
      const q = listQueryOf(params);
      return listPlan(toCallFilter(q), q.limit, q.cursor);
    };
    // Entries of the index the plan walks, from the newest down to the page's last row.
    const walked = (params: Record<string, string>, indexPrefix: string, sqlParams: unknown[]): number | null => {
      const q = listQueryOf(params);
      const page = store.listCalls(toCallFilter(q), q.limit);
      const last = page.items[page.items.length - 1];
      if (!last) return null;
      const row = db.prepare(`SELECT count(*) AS n FROM calls WHERE ${indexPrefix} started_at_us >= ?`).get(...sqlParams, last.startedAtUs) as { n: number };
      return row.n;
    };
    const listProbe = (scenario: string, params: () => Record<string, string>, visited?: () => number | null): Probe => ({
      scenario,
      schema: callPageSchema,
      iteration: () => [listQuery(params())],
      plans: () => ({ list: listPlanOf(params()) }),
      ...(visited ? { visited } : {}),
    });
    const aPod = ctx.pods[0]!;
    const anId = ctx.callIds[0]!;
    const limit = String(pageSize);
    const isoUs = (us: number) => new Date(Math.floor(us / 1000)).toISOString();
    const since = isoUs(ctx.lastUs - DAY_US);
    const randomUntil = () => isoUs(Math.floor(ctx.firstUs + DAY_US + rnd() * (ctx.lastUs - ctx.firstUs - DAY_US)));

    // What the pod route runs: the pod's call graph (a few set queries), the trees with each sandbox's cache
    // entries and open findings, the story's serializer.
    const podProbe = (scenario: string, next: () => PodName & { scope: PodCallScope }, plans: Probe['plans']): Probe => ({
      scenario,
      schema: podStorySchema,
      iteration: () => {
        const p = next();
        return [
          {
            store: () => {
              const graph = store.podCallGraph(p.namespace, p.name, p.scope);
              return { rows: graph.calls.length + graph.delegated.length, body: () => buildPodStory({ podCallGraph: () => graph, failureTexts: (ids) => store.failureTexts(ids) }, p.namespace, p.name, p.scope, storySources) };
            },
            route: () => ops.podStory({ namespace: p.namespace, name: p.name, ...p.scope }),
          },
        ];
      },
      plans,
    });
    const wholeTime = [0, Number.MAX_SAFE_INTEGER];

    const podGraphPlans = (pod: PodName) => () => {
      const ids = JSON.stringify([anId]);
      return {
        podCalls: explain(POD_GRAPH_SQL.podCalls, [pod.namespace, pod.name, ...wholeTime]),
        'childIds, per level of delegation': explain(POD_GRAPH_SQL.childIds, [ids]),
        'byIds, for delegated calls without the pod args': explain(POD_GRAPH_SQL.byIds, [ids]),
        helpers: explain(POD_GRAPH_SQL.helpers, [ids]),
      };
    };
    const podListProbe = (scenario: string, pods: readonly PodName[]): Probe => ({
      scenario,
      schema: callPageSchema,
      iteration: () => {
        const p = pick(pods);
        return [listQuery({ namespace: p.namespace, pod: p.name, limit })];
      },
      plans: () => ({ list: listPlanOf({ namespace: pods[0]!.namespace, pod: pods[0]!.name, limit }) }),
    });

    const failedAdd = { command: 'ADD', failed: 'true', limit };
    const slowBridge = { plugin: 'bridge', minDurationMs: '200', limit };
    const lastDay = { since, limit: String(PAGE_LIMIT) };
    const probes: Probe[] = [
      podProbe('pod', () => ({ ...pick(ctx.pods), scope: {} }), podGraphPlans(aPod)),
      podProbe('pod-busy', () => ({ ...pick(ctx.busyPods), scope: {} }), podGraphPlans(ctx.busyPods[0]!)),
      podProbe(
        'pod-uid',
        () => {
          const p = pick(ctx.busyPodUids);
          return { ...p, scope: { podUid: p.uid } };
        },
        () => {
          const p = ctx.busyPodUids[0]!;
          return { podCallsOfUid: explain(POD_GRAPH_SQL.podCallsOfUid, [p.uid, p.namespace, p.name, ...wholeTime]) };
        },
      ),
      podListProbe('calls-by-pod', ctx.pods),
      podListProbe('calls-by-busy-pod', ctx.busyPods),
      // The plans walk calls_failed_by_command / calls_by_plugin / calls_by_started (see EXPLAIN): count what each passes.
      {
        ...listProbe('calls-failed-add', () => failedAdd, () => walked(failedAdd, 'command = ? AND ok = 0 AND', ['ADD'])),
        // Indexes the planner could walk instead: all failures, or every call of the command.
        otherIndexes: () => ({
          calls_failed: walked(failedAdd, 'ok = 0 AND', []),
          calls_by_command: walked(failedAdd, 'command = ? AND', ['ADD']),
        }),
      },
      listProbe('calls-slow-bridge', () => slowBridge, () => walked(slowBridge, 'plugin = ? AND', ['bridge'])),
      listProbe('calls-last-day', () => lastDay, () => walked(lastDay, '', [])),
      {
        scenario: 'calls-paging',
        schema: callPageSchema,
        // Each page's cursor comes from the store call before it (the route step runs the same queries).
        iteration: () => {
          const until = randomUntil();
          let cursor: string | null = null;
          return Array.from({ length: PAGES_DEEP }, (): Query => {
            const params = () => ({ until, limit: String(PAGE_LIMIT), ...(cursor === null ? {} : { cursor }) });
            return {
              store: () => {
                const q = listQueryOf(params());
                const page = store.listCalls(toCallFilter(q), q.limit, q.cursor ?? null);
                cursor = page.nextCursor;
                return { rows: page.items.length, body: pageBody(page) };
              },
              route: () => {
                const body = ops.callPage(listQueryOf(params()));
                cursor = nextCursorOf(body);
                return body;
              },
            };
          });
        },
        plans: () => {
          const first = { until: randomUntil(), limit: String(PAGE_LIMIT) };
          const q = listQueryOf(first);
          const page = store.listCalls(toCallFilter(q), q.limit);
          return { firstPage: listPlanOf(first), laterPages: listPlanOf({ ...first, ...(page.nextCursor ? { cursor: page.nextCursor } : {}) }) };
        },
      },
      {
        scenario: 'call-detail',
        schema: callDetailSchema,
        iteration: () => {
          const id = pick(ctx.callIds);
          return [
            {
              store: () => {
                const call = store.getCall(id);
                const children = call ? store.childrenOf(id) : [];
                const entries = call?.containerId ? cache.entriesForContainer(call.containerId) : [];
                return { rows: call ? 1 + children.length : 0, body: () => (call ? presentCallDetail(call, presentStoredSummaries(children, store), entries) : null) };
              },
              route: () => ops.callDetail(id),
            },
          ];
        },
        plans: () => ({
          getCall: explain('SELECT * FROM calls WHERE id = ?', [anId]),
          childrenOf: explain(`SELECT ${SUMMARY_COLUMNS} FROM calls WHERE parent_id = ? ORDER BY started_at_us, id`, [anId]),
        }),
      },
    ];
    return probes.map((p) => measure(p, iterations, maxSecondsPerStep));
  } finally {
    db.close();
  }
}

/**
 * A page's nextCursor from its bytes without parsing the page (that would be
 * timed with the route): it is the body's last field, `"nextCursor":…}`.
 */
function nextCursorOf(body: Buffer): string | null {
  const at = body.lastIndexOf('"nextCursor":');
  if (at < 0) throw new Error(`a page without nextCursor: ${body.toString('utf8', 0, 200)}`);
  return (JSON.parse(`{${body.toString('utf8', at)}`) as { nextCursor: string | null }).nextCursor;
}

function measure(p: Probe, iterations: number, maxSeconds: number): StoreDiagnostic {
  const run = (mode: Mode, timed: boolean) => {
    const ms: number[] = [];
    let rows = 0;
    for (const query of p.iteration()) {
      const t0 = performance.now();
      if (mode === 'route') query.route();
      else {
        const r = query.store();
        rows += r.rows;
        if (mode === 'json') {
          const body = r.body();
          JSON.stringify(body);
          if (!timed) {
            const encoded = z.safeEncode(p.schema, body);
            if (!encoded.success) throw new Error(`${p.scenario}: the body does not fit the response schema: ${encoded.error.message.slice(0, 500)}`);
          }
        }
      }
      if (timed) ms.push(performance.now() - t0);
    }
    return { ms, rows };
  };
  const step = (mode: Mode) => {
    const warmUntil = performance.now() + 1000;
    for (let i = 0; i < Math.min(20, iterations) && performance.now() < warmUntil; i++) run(mode, false);
    const ms: number[] = [];
    let rows = 0;
    const deadline = performance.now() + maxSeconds * 1000;
    for (let i = 0; i < iterations && performance.now() < deadline; i++) {
      const r = run(mode, true);
      ms.push(...r.ms);
      rows += r.rows;
    }
    return { ms, rows };
  };
  const store = step('store');
  const json = step('json');
  const route = step('route');
  return {
    scenario: p.scenario,
    queries: store.ms.length,
    storeMs: distribution(store.ms),
    storeAndJsonMs: distribution(json.ms),
    storeAndRouteMs: distribution(route.ms),
    rowsPerQuery: Math.round((store.rows / Math.max(1, store.ms.length)) * 10) / 10,
    plans: p.plans(),
    rowsVisitedPerPage: p.visited?.() ?? null,
    rowsVisitedByOtherIndexes: p.otherIndexes?.() ?? {},
  };
}

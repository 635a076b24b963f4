/**
 * Diagnostics for the API latency benchmark: each scenario's queries run
 * straight against the store in this process (a second, read-only
 * connection to the daemon's file, no HTTP), in three steps that add up to
 * what a route does before its reply leaves:
 *
 *   store    the store call(s) alone: SQLite and row decoding
 *   json     + the route's mapping (summaryFromStored, buildPodStory,
 *            presentCallDetail) and JSON.stringify
 *   route    + the route's own serializer instead of JSON.stringify: plain
 *            JSON.stringify for lists, encodePodStory for the pod story,
 *            fastify-type-provider-zod's zod encode + JSON.stringify for
 *            the call detail (each body is also checked against its
 *            response schema in the untimed warm-up)
 *
 * plus SQLite's query plan for each statement. Set against the HTTP numbers
 * they tell whether SQLite, the response building or the HTTP stack
 * dominates a scenario's latency.
 */

import BetterSqlite3 from 'better-sqlite3';
import { z } from 'zod';
import { presentCallDetail } from '../api/present/call-detail.js';
import { encodePodStory } from '../api/present/fast-json.js';
import { buildPodStory } from '../api/present/pod-story.js';
import { callDetailSchema } from '../api/schemas/call-detail.js';
import { callPageSchema } from '../api/schemas/call-list.js';
import { summaryFromStored } from '../api/schemas/call-summary.js';
import { podStorySchema, type PodStory } from '../api/schemas/pod-story.js';
import { createCacheReader, createFindingsReader } from '../store/cache-reader.js';
import { SUMMARY_COLUMNS } from '../store/call-decode.js';
import { listCallsQuery } from '../store/call-reader.js';
import { decodeCursor } from '../store/cursor.js';
import { POD_GRAPH_SQL } from '../store/pod-calls.js';
import { createCallStore, type CallFilter, type CallPage, type PodCallScope } from '../store/index.js';
import { PAGE_LIMIT, PAGES_DEEP, type ScenarioContext } from './api-latency-http.js';
import type { PodName } from './api-latency-data.js';
import { distribution, type Distribution } from './api-latency-stats.js';

export interface StoreDiagnostic {
  readonly scenario: string;
  /** Timed queries per step. */
  readonly queries: number;
  readonly storeMs: Distribution;
  readonly storeAndJsonMs: Distribution;
  readonly storeAndRouteMs: Distribution | null;
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

/** One query of an iteration: runs the store call, returns rows and (lazily) the route's body. */
type Query = () => { rows: number; body: () => unknown };

interface Probe {
  readonly scenario: string;
  /** The response schema the body must fit (checked in the untimed warm-up). */
  readonly schema: z.ZodType | null;
  /** What the route's serializer does with the body. */
  readonly serialize: ((body: unknown) => string | Buffer) | null;
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
    const plainJson = (body: unknown) => JSON.stringify(body);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    const pageBody = (page: CallPage) => () => ({ items: page.items.map(summaryFromStored), nextCursor: page.nextCursor });
    const listQuery = (filter: CallFilter, limit: number): Query => () => {
      const page = store.listCalls(filter, limit);
      return { rows: page.items.length, body: pageBody(page) };
    };
    // Entries of the index the plan walks, from the newest down to the page's last row.
    const walked = (filter: CallFilter, limit: number, indexPrefix: string, params: unknown[]): number | null => {
      const page = store.listCalls(filter, limit);
      const last = page.items[page.items.length - 1];
      if (!last) return null;
      const row = db.prepare(`SELECT count(*) AS n FROM calls WHERE ${indexPrefix} started_at_us >= ?`).get(...params, last.startedAtUs) as { n: number };
      return row.n;
    };
    const listProbe = (scenario: string, filter: () => CallFilter, limit: number, visited?: () => number | null): Probe => ({
      scenario,
      schema: callPageSchema,
      serialize: plainJson,
      iteration: () => [listQuery(filter(), limit)],
      plans: () => ({ list: listPlan(filter(), limit) }),
      ...(visited ? { visited } : {}),
    });
    const aPod = ctx.pods[0]!;
    const anId = ctx.callIds[0]!;
    const sinceUs = ctx.lastUs - DAY_US;
    const randomUntil = () => Math.floor(ctx.firstUs + DAY_US + rnd() * (ctx.lastUs - ctx.firstUs - DAY_US));

    // What the pod route runs: the pod's call graph (a few set queries), the trees with each sandbox's cache
    // entries and open findings (as the daemon watches caches by default), the story's serializer.
    const storySources = { cache: createCacheReader(db), findings: createFindingsReader(db) };
    const podProbe = (scenario: string, next: () => PodName & { scope: PodCallScope }, plans: Probe['plans']): Probe => ({
      scenario,
      schema: podStorySchema,
      serialize: (body) => encodePodStory(body as PodStory),
      iteration: () => {
        const p = next();
        return [
          () => {
            const graph = store.podCallGraph(p.namespace, p.name, p.scope);
            return { rows: graph.calls.length + graph.delegated.length, body: () => buildPodStory({ podCallGraph: () => graph }, p.namespace, p.name, p.scope, storySources) };
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
      serialize: plainJson,
      iteration: () => {
        const p = pick(pods);
        return [listQuery({ namespace: p.namespace, pod: p.name }, pageSize)];
      },
      plans: () => ({ list: listPlan({ namespace: pods[0]!.namespace, pod: pods[0]!.name }, pageSize) }),
    });
    const aBusyPod = ctx.busyPods[0]!;

    const probes: Probe[] = [
      podProbe('pod', () => ({ ...pick(ctx.pods), scope: {} }), podGraphPlans(aPod)),
      podProbe('pod-busy', () => ({ ...pick(ctx.busyPods), scope: {} }), podGraphPlans(aBusyPod)),
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
        ...listProbe('calls-failed-add', () => ({ command: 'ADD', failed: true }), pageSize, () =>
          walked({ command: 'ADD', failed: true }, pageSize, 'command = ? AND ok = 0 AND', ['ADD']),
        ),
        // Indexes the planner could walk instead: all failures, or every call of the command.
        otherIndexes: () => ({
          calls_failed: walked({ command: 'ADD', failed: true }, pageSize, 'ok = 0 AND', []),
          calls_by_command: walked({ command: 'ADD', failed: true }, pageSize, 'command = ? AND', ['ADD']),
        }),
      },
      listProbe('calls-slow-bridge', () => ({ plugin: 'bridge', minDurationUs: 200_000 }), pageSize, () =>
        walked({ plugin: 'bridge', minDurationUs: 200_000 }, pageSize, 'plugin = ? AND', ['bridge']),
      ),
      listProbe('calls-last-day', () => ({ sinceUs }), PAGE_LIMIT, () => walked({ sinceUs }, PAGE_LIMIT, '', [])),
      {
        scenario: 'calls-paging',
        schema: callPageSchema,
        serialize: plainJson,
        iteration: () => {
          const filter: CallFilter = { untilUs: randomUntil() };
          let cursor: string | null = null;
          return Array.from({ length: PAGES_DEEP }, (): Query => () => {
            const page = store.listCalls(filter, PAGE_LIMIT, cursor);
            cursor = page.nextCursor;
            return { rows: page.items.length, body: pageBody(page) };
          });
        },
        plans: () => {
          const filter: CallFilter = { untilUs: randomUntil() };
          const first = store.listCalls(filter, PAGE_LIMIT);
          return { firstPage: listPlan(filter, PAGE_LIMIT), laterPages: listPlan(filter, PAGE_LIMIT, first.nextCursor ?? undefined) };
        },
      },
      {
        scenario: 'call-detail',
        schema: callDetailSchema,
        // This route keeps fastify-type-provider-zod's serializer: encode, then stringify.
        serialize: (body) => {
          const encoded = z.safeEncode(callDetailSchema, body as z.output<typeof callDetailSchema>);
          if (!encoded.success) throw new Error(`call-detail: the body does not fit the response schema: ${encoded.error.message.slice(0, 500)}`);
          return JSON.stringify(encoded.data);
        },
        iteration: () => {
          const id = pick(ctx.callIds);
          return [
            () => {
              const call = store.getCall(id);
              const children = call ? store.childrenOf(id) : [];
              return { rows: call ? 1 + children.length : 0, body: () => (call ? presentCallDetail(call, children) : null) };
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

function measure(p: Probe, iterations: number, maxSeconds: number): StoreDiagnostic {
  const run = (mode: Mode, timed: boolean) => {
    const ms: number[] = [];
    let rows = 0;
    for (const query of p.iteration()) {
      const t0 = performance.now();
      const r = query();
      if (mode !== 'store') {
        const body = r.body();
        if (mode === 'route' && p.serialize !== null) p.serialize(body);
        else JSON.stringify(body);
        if (!timed && p.schema !== null) {
          const encoded = z.safeEncode(p.schema, body);
          if (!encoded.success) throw new Error(`${p.scenario}: the body does not fit the response schema: ${encoded.error.message.slice(0, 500)}`);
        }
      }
      const elapsed = performance.now() - t0;
      if (timed) {
        ms.push(elapsed);
        rows += r.rows;
      }
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
  const schema = p.serialize === null ? null : step('route');
  return {
    scenario: p.scenario,
    queries: store.ms.length,
    storeMs: distribution(store.ms),
    storeAndJsonMs: distribution(json.ms),
    storeAndRouteMs: schema === null ? null : distribution(schema.ms),
    rowsPerQuery: Math.round((store.rows / Math.max(1, store.ms.length)) * 10) / 10,
    plans: p.plans(),
    rowsVisitedPerPage: p.visited?.() ?? null,
    rowsVisitedByOtherIndexes: p.otherIndexes?.() ?? {},
  };
}

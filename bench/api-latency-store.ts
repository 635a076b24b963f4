/**
 * Diagnostics for the API latency benchmark: the same queries straight
 * against the store in this process (a second, read-only connection to
 * the daemon's file), timed without HTTP, and again with the mapping to
 * CallSummary and JSON.stringify, plus SQLite's query plan for each. Set
 * against the HTTP numbers they tell whether SQLite, serialization or the
 * HTTP stack dominates a scenario's latency.
 */

import BetterSqlite3 from 'better-sqlite3';
import { summaryFromStored } from '../api/schemas/call-summary.js';
import { SUMMARY_COLUMNS } from '../store/call-decode.js';
import { callFilterConditions } from '../store/call-filter-sql.js';
import { decodeCursor } from '../store/cursor.js';
import { createCallStore, type CallFilter } from '../store/index.js';
import type { PodName } from './api-latency-data.js';
import { PAGE_LIMIT, PAGES_DEEP, type ScenarioContext } from './api-latency-http.js';
import { distribution, type Distribution } from './api-latency-stats.js';

export interface StoreDiagnostic {
  readonly scenario: string;
  readonly iterations: number;
  /** The store call alone (SQLite + row decoding). */
  readonly storeMs: Distribution;
  /** The store call, mapping to CallSummary and JSON.stringify: what a route does before the HTTP stack. */
  readonly storeAndJsonMs: Distribution;
  readonly rowsPerQuery: number;
  /** EXPLAIN QUERY PLAN of the SQL the store runs, one entry per statement shape. */
  readonly plans: Record<string, string[]>;
}

const DAY_US = 86_400_000_000;

/** Times one query (store call, and with `json` the mapping and serialization too); returns rows read. */
type Timed = (fn: () => number) => void;

interface Probe {
  readonly scenario: string;
  /** Runs the query (or queries) of one iteration, each through `timed`; `json` also maps and serializes. */
  run(timed: Timed, json: boolean): void;
  readonly plans: () => Record<string, string[]>;
}

/** `iterations` per scenario (the paging one walks PAGES_DEEP pages per iteration, each timed alone). */
export function diagnoseStore(dbFile: string, ctx: ScenarioContext, pageSize: number, iterations: number, rnd: () => number): StoreDiagnostic[] {
  const db = new BetterSqlite3(dbFile, { readonly: true, fileMustExist: true });
  try {
    const store = createCallStore(db);
    const explain = (sql: string, params: unknown[]): string[] =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map((r) => r.detail);
    const listPlan = (filter: CallFilter, limit: number, cursor?: string): string[] => {
      const { conditions, params } = callFilterConditions(filter);
      const all: unknown[] = [...params];
      if (cursor) {
        const key = decodeCursor(cursor, dbFile);
        conditions.push('(started_at_us, id) < (?, ?)');
        all.push(key.startedAtUs, key.id);
      }
      const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
      return explain(`SELECT ${SUMMARY_COLUMNS} FROM calls ${where} ORDER BY started_at_us DESC, id DESC LIMIT ?`, [...all, limit + 1]);
    };
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    const list = (filter: CallFilter, limit: number, json: boolean, cursor?: string | null) => {
      const page = store.listCalls(filter, limit, cursor);
      if (json) JSON.stringify({ items: page.items.map(summaryFromStored), nextCursor: page.nextCursor });
      return page;
    };
    const listProbe = (scenario: string, filter: () => CallFilter, limit: number): Probe => ({
      scenario,
      run: (timed, json) => {
        const f = filter();
        timed(() => list(f, limit, json).items.length);
      },
      plans: () => ({ list: listPlan(filter(), limit) }),
    });
    const aPod = pick(ctx.pods);
    const sinceUs = ctx.lastUs - DAY_US;
    const randomUntil = () => ctx.firstUs + DAY_US / 4 + rnd() * (ctx.lastUs - ctx.firstUs - DAY_US / 4);

    const probes: Probe[] = [
      {
        scenario: 'pod',
        run: (timed, json) => {
          const p: PodName = pick(ctx.pods);
          timed(() => {
            const calls = store.listPodCalls(p.namespace, p.name);
            if (json) JSON.stringify({ calls: calls.map(summaryFromStored) });
            return calls.length;
          });
        },
        plans: () => ({
          podCalls: explain(`SELECT ${SUMMARY_COLUMNS} FROM calls WHERE pod_namespace = ? AND pod_name = ? ORDER BY started_at_us, id LIMIT 10000`, [
            aPod.namespace,
            aPod.name,
          ]),
        }),
      },
      {
        scenario: 'calls-by-pod',
        run: (timed, json) => {
          const p = pick(ctx.pods);
          timed(() => list({ namespace: p.namespace, pod: p.name }, pageSize, json).items.length);
        },
        plans: () => ({ list: listPlan({ namespace: aPod.namespace, pod: aPod.name }, pageSize) }),
      },
      listProbe('calls-failed-add', () => ({ command: 'ADD', failed: true }), pageSize),
      listProbe('calls-slow-bridge', () => ({ plugin: 'bridge', minDurationUs: 200_000 }), pageSize),
      listProbe('calls-last-day', () => ({ sinceUs }), PAGE_LIMIT),
      {
        scenario: 'calls-paging',
        run: (timed, json) => {
          const filter: CallFilter = { untilUs: Math.floor(randomUntil()) };
          let cursor: string | null = null;
          for (let page = 1; page <= PAGES_DEEP; page++) {
            timed(() => {
              const result = list(filter, PAGE_LIMIT, json, cursor);
              cursor = result.nextCursor;
              return result.items.length;
            });
          }
        },
        plans: () => {
          const filter: CallFilter = { untilUs: Math.floor(randomUntil()) };
          const first = store.listCalls(filter, PAGE_LIMIT);
          return { firstPage: listPlan(filter, PAGE_LIMIT), nextPages: listPlan(filter, PAGE_LIMIT, first.nextCursor ?? undefined) };
        },
      },
      {
        scenario: 'call-detail',
        run: (timed, json) => {
          const id = pick(ctx.callIds);
          timed(() => {
            const call = store.getCall(id);
            const children = store.childrenOf(id);
            if (json && call) {
              const { stdin, stdout, stderr, helpers: _h, ...rest } = call;
              const b64 = (x: typeof stdin) => x.bytes.toString('base64');
              JSON.stringify({ ...rest, stdin: b64(stdin), stdout: b64(stdout), stderr: b64(stderr), children: children.map(summaryFromStored) });
            }
            return call ? 1 + children.length : 0;
          });
        },
        plans: () => ({
          call: explain('SELECT * FROM calls WHERE id = ?', [ctx.callIds[0]]),
          children: explain(`SELECT ${SUMMARY_COLUMNS} FROM calls WHERE parent_id = ? ORDER BY started_at_us, id`, [ctx.callIds[0]]),
        }),
      },
    ];
    return probes.map((p) => measure(p, iterations));
  } finally {
    db.close();
  }
}

function measure(p: Probe, iterations: number): StoreDiagnostic {
  const time = (json: boolean) => {
    const ms: number[] = [];
    let rows = 0;
    const ignore: Timed = (fn) => void fn();
    const record: Timed = (fn) => {
      const t0 = performance.now();
      rows += fn();
      ms.push(performance.now() - t0);
    };
    for (let i = 0; i < Math.min(20, iterations); i++) p.run(ignore, json);
    for (let i = 0; i < iterations; i++) p.run(record, json);
    return { ms, rows };
  };
  const plain = time(false);
  const withJson = time(true);
  return {
    scenario: p.scenario,
    iterations,
    storeMs: distribution(plain.ms),
    storeAndJsonMs: distribution(withJson.ms),
    rowsPerQuery: Math.round((plain.rows / Math.max(1, plain.ms.length)) * 10) / 10,
    plans: p.plans(),
  };
}

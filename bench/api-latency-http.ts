/**
 * The REST side of the API latency benchmark: the query scenarios and a
 * closed-loop client that runs one of them at a fixed concurrency for a
 * fixed number of requests (or until a time cap, for slow routes) and times
 * every request from just before it is sent to the last byte of the body.
 *
 * The client keeps one connection per worker and reads every answer into
 * buffers it reuses (http-reader.ts), and parses a body only when a
 * scenario reads it (paging's nextCursor) or for the item count of the
 * first ITEM_SAMPLE answers: the time measured should be the daemon's, not
 * the client's. Node's fetch (undici) was used first; it added ~0.6 ms to
 * every request and most of the /healthz floor's p99 (results before
 * 2026-11-22). node:http came next; its Buffer per socket read made the
 * client collect its garbage inside the timed requests of large answers
 * (bench/README.md, "Busy pod story").
 */

import type { PodName } from './api-latency-data.js';
import { HttpReader } from './lib/http-reader.js';
import { cpuWindow, distribution, round, type CpuShare, type Distribution, type ProcMemory } from './lib/stats.js';

/** One pod: a name and the UID it had (a StatefulSet's name is reused by every pod it recreates). */
export interface PodIncarnation extends PodName {
  readonly uid: string;
}

export interface ScenarioContext {
  /** Pods of random calls (so about one pod as likely as another), other than the busy names'. */
  readonly pods: readonly PodIncarnation[];
  /** The StatefulSet names recreated all week (~300 calls each), and pods sampled from their calls. */
  readonly busyPods: readonly PodName[];
  readonly busyPodUids: readonly PodIncarnation[];
  readonly callIds: readonly string[];
  /** Start of the data set's week and its end ("now" for the data), µs since the epoch. */
  readonly firstUs: number;
  readonly lastUs: number;
}

/** A 200 answer's body, parsed when asked. Read it before the worker's next request, which reuses its buffer. */
export interface Body {
  json(): unknown;
}

/** One timed request; `tag` tells requests of one scenario apart (the page number when paging). */
export type Getter = (pathAndQuery: string, tag?: string) => Promise<Body>;

export interface Scenario {
  readonly id: string;
  readonly route: string;
  /** The query as the report shows it. */
  readonly shape: string;
  /** Requests one iteration makes (1, or the pages of a walk). */
  readonly requestsPerIteration: number;
  iterate(get: Getter, rnd: () => number): Promise<void>;
}

export const PAGES_DEEP = 5;
export const PAGE_LIMIT = 100;
const DAY_US = 86_400_000_000;

const iso = (us: number): string => new Date(Math.floor(us / 1000)).toISOString();
const pick = <T>(xs: readonly T[], rnd: () => number): T => xs[Math.floor(rnd() * xs.length)]!;
const podPath = (p: PodName) => `/api/v1/pods/${encodeURIComponent(p.namespace)}/${encodeURIComponent(p.name)}`;
const callsOfPod = (p: PodName) => `/api/v1/calls?namespace=${encodeURIComponent(p.namespace)}&pod=${encodeURIComponent(p.name)}`;

export function scenarios(ctx: ScenarioContext): Scenario[] {
  const sinceIso = iso(ctx.lastUs - DAY_US);
  const one = (id: string, route: string, shape: string, url: (rnd: () => number) => string): Scenario => ({
    id,
    route,
    shape,
    requestsPerIteration: 1,
    iterate: async (get, rnd) => {
      await get(url(rnd));
    },
  });
  return [
    one('pod', 'GET /api/v1/pods/:ns/:name', "/api/v1/pods/<random pod> (its name's whole week: most are one pod, ~5 calls)", (rnd) => podPath(pick(ctx.pods, rnd))),
    one('pod-busy', 'GET /api/v1/pods/:ns/:name', '/api/v1/pods/<busy StatefulSet name> (its whole week: ~65 pods, ~290 calls)', (rnd) => podPath(pick(ctx.busyPods, rnd))),
    one('pod-uid', 'GET /api/v1/pods/:ns/:name', '/api/v1/pods/<busy StatefulSet name>?podUid=<one of its pods> (~4 calls)', (rnd) => {
      const p = pick(ctx.busyPodUids, rnd);
      return `${podPath(p)}?podUid=${encodeURIComponent(p.uid)}`;
    }),
    one('calls-by-pod', 'GET /api/v1/calls', '?namespace=<ns>&pod=<random pod>', (rnd) => callsOfPod(pick(ctx.pods, rnd))),
    one('calls-by-busy-pod', 'GET /api/v1/calls', '?namespace=<ns>&pod=<busy StatefulSet name> (a full page)', (rnd) => callsOfPod(pick(ctx.busyPods, rnd))),
    one('calls-failed-add', 'GET /api/v1/calls', '?command=ADD&failed=true', () => '/api/v1/calls?command=ADD&failed=true'),
    one('calls-slow-bridge', 'GET /api/v1/calls', '?plugin=bridge&minDurationMs=200', () => '/api/v1/calls?plugin=bridge&minDurationMs=200'),
    one('calls-last-day', 'GET /api/v1/calls', `?since=<1 day before the data's end>&limit=${PAGE_LIMIT}`, () => `/api/v1/calls?since=${encodeURIComponent(sinceIso)}&limit=${PAGE_LIMIT}`),
    {
      id: 'calls-paging',
      route: 'GET /api/v1/calls',
      shape: `?until=<random time in days 2-7>&limit=${PAGE_LIMIT}, then &cursor=<nextCursor> to page ${PAGES_DEEP}`,
      requestsPerIteration: PAGES_DEEP,
      iterate: async (get, rnd) => {
        // From a day in (the week's first hours hold fewer than five pages on small data sets) to its end.
        const untilUs = ctx.firstUs + DAY_US + rnd() * (ctx.lastUs - ctx.firstUs - DAY_US);
        const base = `/api/v1/calls?until=${encodeURIComponent(iso(untilUs))}&limit=${PAGE_LIMIT}`;
        let cursor: string | null = null;
        for (let page = 1; page <= PAGES_DEEP; page++) {
          const body = (await get(cursor === null ? base : `${base}&cursor=${encodeURIComponent(cursor)}`, `page${page}`)).json() as { nextCursor?: string | null };
          cursor = body.nextCursor ?? null;
          if (cursor === null && page < PAGES_DEEP) throw new Error(`no nextCursor after page ${page} of ${base}`);
        }
      },
    },
    one('call-detail', 'GET /api/v1/calls/:id', '/api/v1/calls/<random id> (with payloads)', (rnd) => `/api/v1/calls/${encodeURIComponent(pick(ctx.callIds, rnd))}`),
  ];
}

/** The HTTP stack's floor: the cheapest route, answered without touching the calls table. */
export const HEALTHZ_SCENARIO: Scenario = {
  id: 'healthz',
  route: 'GET /healthz',
  shape: '/healthz (no calls table access: the HTTP + client floor)',
  requestsPerIteration: 1,
  iterate: async (get) => {
    await get('/healthz');
  },
};

export interface RequestSample {
  readonly ms: number;
  readonly tag?: string;
}

export interface LoadResult {
  readonly scenario: string;
  readonly concurrency: number;
  readonly requests: number;
  /** Fewer than the requests asked for: the run hit its time cap. */
  readonly cappedByTime: boolean;
  readonly errors: number;
  readonly firstError: string | null;
  readonly seconds: number;
  readonly requestsPerSecond: number;
  readonly latencyMs: Distribution;
  /** Per tag (paging: per page), when the scenario tags its requests. */
  readonly byTag: Record<string, Distribution>;
  /** Mean items per response (`items`, or `calls` with their `children`) over the first ITEM_SAMPLE timed ones, and mean body bytes over all. */
  readonly itemsPerResponse: number;
  readonly bytesPerResponse: number;
  /** Largest page with a nextCursor among those counted: the route's page size when none was asked for. */
  readonly pageSize: number | null;
  readonly cpu: CpuShare;
  /** The daemon's memory right after the run (filled in by the caller). */
  readonly daemonMemoryAfter?: ProcMemory | null;
  readonly raw: number[];
  readonly rawTags?: string[];
}

export class RouteMissingError extends Error {}

/** Answers per run whose items are counted (the mean of "items/resp"); the others are not parsed unless a scenario reads them. */
const ITEM_SAMPLE = 50;

/** A non-200 answer, already counted. */
class HttpStatusError extends Error {}

function countItems(body: unknown): number {
  if (typeof body !== 'object' || body === null) return 0;
  const b = body as { items?: unknown; calls?: unknown };
  const list = Array.isArray(b.items) ? b.items : Array.isArray(b.calls) ? b.calls : null;
  if (list === null) return 1;
  const walk = (xs: unknown[]): number =>
    xs.reduce<number>((n, x) => {
      const children = (x as { children?: unknown }).children;
      return n + 1 + (Array.isArray(children) ? walk(children) : 0);
    }, 0);
  return walk(list);
}

/**
 * Runs `scenario` with `concurrency` workers until `requests` requests are
 * done (warm-up ones first, untimed). A 404 on the first request means the
 * route is not there (yet): RouteMissingError.
 */
export async function runLoad(
  baseUrl: string,
  scenario: Scenario,
  opts: {
    requests: number;
    warmup: number;
    /** Stop issuing after this long even when fewer requests are done (slow routes would blow the time budget). */
    maxSeconds: number;
    concurrency: number;
    rnd: () => number;
    ourPids: () => readonly number[];
  },
): Promise<LoadResult> {
  let recording = false;
  const samples: RequestSample[] = [];
  let errors = 0;
  let firstError: string | null = null;
  let items = 0;
  let bytes = 0;
  let responses = 0;
  let pageSize: number | null = null;
  let seenOk = false;

  // One connection per worker, kept across the warm-up and the timed run; opened again if the daemon closed it.
  const readers: Array<HttpReader | null> = Array.from({ length: opts.concurrency }, () => null);
  const readerOf = async (w: number): Promise<HttpReader> => {
    const r = readers[w];
    if (r?.alive) return r;
    readers[w] = await HttpReader.open(baseUrl);
    return readers[w];
  };
  let counted = 0;
  const getFor =
    (w: number): Getter =>
    async (pathAndQuery, tag) => {
      const reader = await readerOf(w);
      const t0 = performance.now();
      const res = await reader.get(pathAndQuery);
      const ms = performance.now() - t0;
      if (res.status === 404 && !seenOk) throw new RouteMissingError(`${scenario.route}: 404 for ${pathAndQuery}: ${res.text().slice(0, 300)}`);
      if (res.status !== 200) {
        errors++;
        const message = `${res.status} for ${pathAndQuery}: ${res.text().slice(0, 300)}`;
        firstError ??= message;
        throw new HttpStatusError(message);
      }
      seenOk = true;
      let parsed: { value: unknown } | null = null;
      const body: Body = {
        json() {
          parsed ??= { value: JSON.parse(res.text()) as unknown };
          return parsed.value;
        },
      };
      if (recording) {
        samples.push(tag === undefined ? { ms } : { ms, tag });
        responses++;
        bytes += res.bytes;
        if (counted < ITEM_SAMPLE) {
          counted++;
          const b = body.json() as { items?: unknown[]; nextCursor?: unknown };
          items += countItems(b);
          if (Array.isArray(b.items) && typeof b.nextCursor === 'string') pageSize = Math.max(pageSize ?? 0, b.items.length);
        }
      }
      return body;
    };

  let cappedByTime = false;
  const loop = async (target: number, seconds: number) => {
    let issued = 0;
    const deadline = performance.now() + seconds * 1000;
    const worker = async (w: number) => {
      const get = getFor(w);
      while (issued < target) {
        if (performance.now() > deadline) {
          if (recording) cappedByTime = true;
          break;
        }
        issued += scenario.requestsPerIteration;
        try {
          await scenario.iterate(get, opts.rnd);
        } catch (err) {
          if (err instanceof RouteMissingError) throw err;
          if (!(err instanceof HttpStatusError)) {
            errors++;
            firstError ??= err instanceof Error ? err.message : String(err);
          }
          if (errors > 20) throw new Error(`${scenario.id}: too many errors, first: ${firstError}`, { cause: err });
        }
      }
    };
    await Promise.all(Array.from({ length: opts.concurrency }, (_, w) => worker(w)));
  };

  await loop(opts.warmup, Math.min(10, opts.maxSeconds / 3));
  recording = true;
  const endCpu = cpuWindow(opts.ourPids);
  const t0 = performance.now();
  try {
    await loop(opts.requests, opts.maxSeconds);
  } finally {
    for (const r of readers) r?.close();
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpu = endCpu();

  const byTag: Record<string, Distribution> = {};
  const tags = [...new Set(samples.map((s) => s.tag).filter((t): t is string => t !== undefined))].sort();
  for (const t of tags) byTag[t] = distribution(samples.filter((s) => s.tag === t).map((s) => s.ms));
  return {
    scenario: scenario.id,
    concurrency: opts.concurrency,
    requests: samples.length,
    cappedByTime,
    errors,
    firstError,
    seconds: round(seconds),
    requestsPerSecond: round(samples.length / seconds, 1),
    latencyMs: distribution(samples.map((s) => s.ms)),
    byTag,
    itemsPerResponse: round(items / Math.max(1, counted), 1),
    bytesPerResponse: Math.round(bytes / Math.max(1, responses)),
    pageSize,
    cpu,
    raw: samples.map((s) => round(s.ms)),
    ...(tags.length > 0 ? { rawTags: samples.map((s) => s.tag ?? '') } : {}),
  };
}

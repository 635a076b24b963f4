/** bench/results/api-latency.md from the benchmark's JSON report. */

import { BUSY_PERIOD_HOURS, type DatasetResult } from './api-latency-data.js';
import type { LoadResult } from './api-latency-http.js';
import type { LiveResult } from './api-latency-live.js';
import { distribution, type CpuShare, type Distribution, type ProcMemory } from './lib/stats.js';
import type { StoreDiagnostic } from './api-latency-store.js';

export const TARGETS = { restP99Ms: 10, liveStartedP99Ms: 100, daemonRssMiB: 200 } as const;

export interface ScenarioInfo {
  readonly id: string;
  readonly route: string;
  readonly shape: string;
  /** Why it was not measured (its route answered 404), or null. */
  readonly missing: string | null;
}

export interface Machine {
  readonly nproc: number;
  readonly cpuModel: string;
  readonly memoryGiB: number;
  readonly kernel: string;
  readonly os: string;
  readonly node: string;
  readonly sqlite: string;
  readonly bpftrace: string;
  readonly loadAverageAtStart: readonly number[];
}

export interface MemoryReadings {
  readonly afterStartup: ProcMemory | null;
  readonly afterQueries: ProcMemory | null;
  readonly afterLive: ProcMemory | null;
  readonly tracerAfterQueries: ProcMemory | null;
}

/** What both reports (the full benchmark and --live-only) open with. */
interface ReportHeader {
  readonly command: string;
  readonly date: string;
  readonly durationSeconds: number;
  readonly machine: Machine;
  readonly options: Record<string, unknown>;
  readonly targets: typeof TARGETS;
}

export interface Report extends ReportHeader {
  readonly benchmark: 'api-latency';
  readonly dataset: DatasetResult & { readonly samplePods: readonly string[] };
  readonly daemon: { readonly startupSeconds: number; readonly capture: string; readonly finalizeGraceMs: number; readonly healthAtEnd: unknown };
  readonly scenarios: readonly ScenarioInfo[];
  readonly http: readonly LoadResult[];
  readonly store: readonly StoreDiagnostic[];
  /** CPU over the whole diagnostic phase (its p99s are only as good as the machine was quiet). */
  readonly storeCpu: CpuShare;
  readonly live: LiveResult;
  /** The same with other CNI activity meanwhile (not what the target is defined on). */
  readonly liveBusy: LiveResult | null;
  readonly memory: MemoryReadings;
  readonly verdicts: Verdicts;
}

export interface Verdicts {
  readonly restAtConcurrency1: Verdict;
  readonly restAtConcurrency8: Verdict;
  readonly liveStarted: Verdict;
  readonly daemonRss: Verdict;
}

export interface Verdict {
  /** null: could not be measured. */
  readonly met: boolean | null;
  readonly detail: string;
}

const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '–');
const f2 = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : '–');
const yes = (met: boolean | null) => (met === null ? '**not measured**' : met ? 'met' : '**not met**');
const dist = (d: Distribution | null | undefined) => (d ? `${f2(d.p50)} / ${f2(d.p99)} / ${f2(d.max)}` : '–');

export function verdicts(http: readonly LoadResult[], scenarios: readonly ScenarioInfo[], live: LiveResult, memory: MemoryReadings): Verdicts {
  const rest = (c: number): Verdict => {
    const rows = http.filter((r) => r.concurrency === c && r.scenario !== 'healthz');
    const missing = scenarios.filter((s) => s.missing !== null).map((s) => s.id);
    if (rows.length === 0) return { met: null, detail: `no REST scenario could be measured (${missing.join(', ')} missing)` };
    const over = rows.filter((r) => !(r.latencyMs.p99 <= TARGETS.restP99Ms));
    const parts = [`${rows.length - over.length} of ${rows.length} scenarios at p99 ≤ ${TARGETS.restP99Ms} ms`];
    if (over.length > 0) parts.push(`over: ${over.map((r) => `${r.scenario} ${f1(r.latencyMs.p99)} ms`).join(', ')}`);
    if (missing.length > 0) parts.push(`not measured (route missing): ${missing.join(', ')}`);
    return { met: missing.length > 0 && over.length === 0 ? null : over.length === 0, detail: parts.join('; ') };
  };
  const peaks = [memory.afterStartup, memory.afterQueries, memory.afterLive].filter((m): m is ProcMemory => m !== null);
  const hwm = Math.max(...peaks.map((m) => m.vmHwmMiB));
  const rss = memory.afterQueries?.vmRssMiB ?? Number.NaN;
  const rssVerdict: Verdict =
    peaks.length === 0
      ? { met: null, detail: 'the daemon was gone before its memory could be read' }
      : { met: hwm <= TARGETS.daemonRssMiB, detail: `VmRSS after the queries ${f1(rss)} MiB, peak VmHWM ${f1(hwm)} MiB` };
  return { restAtConcurrency1: rest(1), restAtConcurrency8: rest(8), liveStarted: liveVerdict(live), daemonRss: rssVerdict };
}

/** exec → websocket: call.started p99 against its target, every call heard of. */
export function liveVerdict(live: LiveResult): Verdict {
  if (!live.available || live.startedMs === null) return { met: null, detail: live.reason ?? 'no call.started message arrived' };
  return {
    met: live.startedMs.p99 <= TARGETS.liveStartedP99Ms && live.missingStarted === 0,
    detail: `call.started p99 ${f1(live.startedMs.p99)} ms over ${live.startedMs.n} execs${live.missingStarted > 0 ? `, ${live.missingStarted} never arrived` : ''}`,
  };
}

export function markdown(r: Report): string {
  const d = r.dataset;
  const m = r.machine;
  const out: string[] = [];
  out.push('# API latency benchmark', '');
  out.push(
    `${r.date}, ${m.nproc} × ${m.cpuModel}, ${m.memoryGiB} GiB, ${m.os}, kernel ${m.kernel}, Node ${m.node}, SQLite ${m.sqlite}, ${m.bpftrace}.`,
    `Load average when it started: ${m.loadAverageAtStart.map((x) => x.toFixed(2)).join(' ')} (other work on the machine; see the "others' CPU" column).`,
    `Command: \`${r.command}\`; whole run ${f1(r.durationSeconds / 60)} min.`,
    '',
  );

  out.push('## Verdict', '', '| target | result | |', '|---|---|---|');
  out.push(`| REST p99 ≤ ${TARGETS.restP99Ms} ms, concurrency 1 | ${yes(r.verdicts.restAtConcurrency1.met)} | ${r.verdicts.restAtConcurrency1.detail} |`);
  out.push(`| REST p99 ≤ ${TARGETS.restP99Ms} ms, concurrency 8 | ${yes(r.verdicts.restAtConcurrency8.met)} | ${r.verdicts.restAtConcurrency8.detail} |`);
  out.push(`| exec → websocket \`call.started\` p99 ≤ ${TARGETS.liveStartedP99Ms} ms | ${yes(r.verdicts.liveStarted.met)} | ${r.verdicts.liveStarted.detail} |`);
  out.push(`| daemon RSS ≤ ${TARGETS.daemonRssMiB} MiB with the ${d.calls.toLocaleString('en-US')}-call database | ${yes(r.verdicts.daemonRss.met)} | ${r.verdicts.daemonRss.detail} |`);
  out.push('');

  out.push('## Data set', '');
  const pct = (n: number) => `${((100 * n) / d.calls).toFixed(2)}%`;
  out.push(
    `${d.calls.toLocaleString('en-US')} calls written through the store's own \`writeEvents\` (\`call.finished\` events, ${2000} per transaction): ` +
      `${d.replicas.toLocaleString('en-US')} replicas in ${d.namespaces} namespaces going through ${d.podUids.toLocaleString('en-US')} pods (UIDs) under ${d.podNames.toLocaleString('en-US')} names ` +
      `(a Deployment's new pod gets a new name, a StatefulSet's the same one), ${d.sandboxes.toLocaleString('en-US')} sandboxes (bridge ADD → host-local ADD, later bridge DEL → host-local DEL), ` +
      `${d.versionProbes.toLocaleString('en-US')} VERSION probes (${pct(d.versionProbes)}, no pod, as libcni sends them), ${d.failedCalls.toLocaleString('en-US')} failed calls (${pct(d.failedCalls)}), ` +
      `mean stdin ${d.stdinBytesMean} B, mean stdout ${d.stdoutBytesMean} B (ADD results ~400 B, DEL none), durations 5-500 ms, ` +
      `starts spread over ${((d.lastStartedAtUs - d.firstStartedAtUs) / 86_400e6).toFixed(1)} days ending ${new Date(d.lastStartedAtUs / 1000).toISOString()}. ` +
      `That is ~${f1((d.calls - d.versionProbes) / d.podUids)} calls per pod. ` +
      `${d.busyPods.length} StatefulSet names, one per namespace, are recreated every ~${BUSY_PERIOD_HOURS} h all week (a pod evicted and scheduled back again and again): ` +
      `~${Math.round(d.busyPodCalls / Math.max(1, d.busyPods.length))} calls per name, ${pct(d.busyPodCalls)} of all calls; the \`-busy\` scenarios ask for them, the others for random pods.`,
    '',
    `Population: ${f1(d.populateSeconds)} s (${Math.round(d.calls / d.populateSeconds).toLocaleString('en-US')} calls/s) on ${d.populatedAt}` +
      `${d.cached ? ', reused from the cache for this run' : ''}; file ${(d.fileBytes / 2 ** 30).toFixed(2)} GiB, ` +
      `planner statistics (sqlite_stat1) ${d.hasSqliteStat1 ? 'present (the store runs PRAGMA optimize on close)' : 'absent'}.`,
    '',
  );
  out.push(
    `Daemon: \`cnirec run --capture ${r.daemon.capture}\` (real bpftrace attached all along) on a private copy of that file, ready in ${f1(r.daemon.startupSeconds)} s.`,
    '',
  );

  out.push('## REST latency (ms, from just before the request is sent to the last body byte, loopback, one kept-alive connection per client worker reading into reused buffers)', '');
  out.push(
    `Closed loop: each of *c* workers sends its next request when the previous one is answered, ${String(r.options.requests)} timed requests per row after ${String(r.options.warmup)} untimed ones, ` +
      `or as many as fit in ${String(r.options.maxSecondsPerRun)} s (rows marked "capped"). ` +
      'With concurrency 8 the daemon, reading on its main thread, holds up to 7 other requests, so those latencies include queueing; req/s shows what it sustains.',
    '',
  );
  out.push('| scenario | query | c | p50 | p90 | p99 | max | req/s | items/resp | KiB/resp | others\' CPU | p99 ≤ 10 ms |', '|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const s of r.scenarios) {
    if (s.missing !== null) {
      out.push(`| ${s.id} | \`${s.shape}\` | – | | | | | | | | | **not measured**: ${s.missing.replace(/\|/g, '\\|').slice(0, 120)} |`);
      continue;
    }
    for (const h of r.http.filter((x) => x.scenario === s.id)) {
      const l = h.latencyMs;
      const verdict = s.id === 'healthz' ? '(floor)' : l.p99 <= TARGETS.restP99Ms ? 'met' : '**not met**';
      out.push(
        `| ${s.id} | \`${s.shape}\` | ${h.concurrency}${h.cappedByTime ? ` (capped: ${h.requests} requests)` : ''} | ${f2(l.p50)} | ${f2(l.p90)} | ${f2(l.p99)} | ${f2(l.max)} | ${Math.round(h.requestsPerSecond)} | ${h.itemsPerResponse} | ${f1(h.bytesPerResponse / 1024)} | ${Math.round(h.cpu.foreign * 100)}% | ${verdict}${h.errors > 0 ? ` (${h.errors} errors: ${h.firstError ?? ''})` : ''} |`,
      );
    }
  }
  const paging = r.http.filter((h) => h.scenario === 'calls-paging');
  if (paging.length > 0) {
    out.push('', 'Paging, per page (p50 / p99 / max ms):', '', '| c | ' + Object.keys(paging[0]!.byTag).join(' | ') + ' |', '|---|' + Object.keys(paging[0]!.byTag).map(() => '---|').join(''));
    for (const h of paging) out.push(`| ${h.concurrency} | ${Object.values(h.byTag).map(dist).join(' | ')} |`);
  }
  out.push('');

  out.push('## Where the time goes (concurrency 1)', '');
  out.push(
    "Each scenario's queries again, straight against the store in the benchmark process (a second, read-only connection to the daemon's file, no HTTP), " +
      'in three steps: **store** = the store call(s) alone (SQLite + row decoding); **+ JSON** = plus the route\'s mapping ' +
      '(summaryFromStored / buildPodStory / presentCallDetail) and a plain `JSON.stringify`; **+ route** = the read op the route itself runs ' +
      '(`api/reads/read-ops.ts`, from the parsed query to the bytes sent, with the route\'s own serializer: `encodePodStory` for the pod story, ' +
      'the response schema\'s encode for the call detail), i.e. everything the route does before the reply leaves. ' +
      'HTTP minus "+ route" is fastify, loopback and the client, whose floor is `/healthz`. The plan is SQLite\'s `EXPLAIN QUERY PLAN` for the statements the store runs. ' +
      `Others' CPU during this phase: ${Math.round(r.storeCpu.foreign * 100)}%.`,
    '',
  );
  const floor = r.http.find((h) => h.scenario === 'healthz' && h.concurrency === 1);
  out.push(
    '| scenario | HTTP p50 / p99 | store p50 / p99 | + JSON p50 / p99 | + route p50 / p99 | rows | rows the index walk passes per page | query plan |',
    '|---|---|---|---|---|---|---|---|',
  );
  if (floor) out.push(`| healthz (floor) | ${f2(floor.latencyMs.p50)} / ${f2(floor.latencyMs.p99)} | – | – | – | – | – | – |`);
  const pp = (x: Distribution | null) => (x ? `${f2(x.p50)} / ${f2(x.p99)}` : '–');
  for (const s of r.store) {
    const h = r.http.find((x) => x.scenario === s.scenario && x.concurrency === 1);
    const plan = Object.entries(s.plans)
      .map(([k, v]) => `${k}: ${v.join('; ')}`)
      .join('<br>');
    out.push(
      `| ${s.scenario} | ${h ? pp(h.latencyMs) : '–'} | ${pp(s.storeMs)} | ${pp(s.storeAndJsonMs)} | ${pp(s.storeAndRouteMs)} | ${s.rowsPerQuery} | ${visited(s)} | ${plan || '–'} |`,
    );
  }
  out.push('');

  out.push(...breakdown(r));

  out.push(...liveSections(r.live, r.liveBusy, r.daemon.finalizeGraceMs, r.verdicts.liveStarted));

  out.push('## Daemon memory', '');
  const mem = (x: ProcMemory | null) => (x ? `${f1(x.vmRssMiB)} | ${f1(x.vmHwmMiB)}` : '– | –');
  out.push('| when | VmRSS MiB | VmHWM MiB |', '|---|---|---|');
  out.push(`| after startup (1M-call database open, tracer attached) | ${mem(r.memory.afterStartup)} |`);
  for (const h of r.http) {
    if (h.daemonMemoryAfter !== undefined) out.push(`| after ${h.scenario}, concurrency ${h.concurrency} | ${mem(h.daemonMemoryAfter)} |`);
  }
  out.push(`| after all REST scenarios | ${mem(r.memory.afterQueries)} |`);
  out.push(`| after the live tail | ${mem(r.memory.afterLive)} |`);
  out.push(`| bpftrace (its own process, not counted) after the REST scenarios | ${mem(r.memory.tracerAfterQueries)} |`);
  out.push('', `Target ≤ ${TARGETS.daemonRssMiB} MiB (node daemon, peak VmHWM): ${yes(r.verdicts.daemonRss.met)}.`, '');
  return `${out.join('\n')}\n`;
}

/** The exec → websocket sections, quiet node and busy node, shared by the full report and --live-only's. */
function liveSections(l: LiveResult, b: LiveResult | null, finalizeGraceMs: number, verdict: Verdict): string[] {
  const out: string[] = ['## exec → websocket (live tail)', ''];
  if (!l.available) {
    out.push(`Not measured: ${l.reason ?? 'unknown'}.`, '');
  } else {
    out.push(
      `A tail client on \`/api/v1/tail?namespace=bench-live\`; \`${l.plugin}\` ADD exec'd ${l.execs} times, one at a time (argv = path only, config on stdin, ` +
        '`CNI_ARGS=K8S_POD_NAMESPACE=bench-live;K8S_POD_NAME=p<i>;IgnoreUnknown=1`, a temporary dataDir), timed from just before `spawn`; messages matched by container id. ' +
        `The daemon holds a finished call for its finalize grace (${finalizeGraceMs} ms) before \`call.finished\`.`,
      '',
      ...liveTable(l, `p99 ≤ ${TARGETS.liveStartedP99Ms} ms: ${yes(verdict.met)}`),
    );
  }
  if (b?.available && b.background) {
    out.push(
      '### The same with other CNI activity on the node (not part of the target)',
      '',
      `${b.execs} more host-local ADDs measured the same way while \`host-local VERSION\` probes were exec'd in the background, ` +
        `${b.background.intervalMs} ms apart (${b.background.perSecond} execs/s, ${b.background.execs} in all; no pod, so none reaches this tail).`,
      '',
      ...liveTable(b, `p99 ≤ ${TARGETS.liveStartedP99Ms} ms: ${b.startedMs && b.startedMs.p99 <= TARGETS.liveStartedP99Ms ? 'met' : '**not met**'}`),
    );
  }
  return out;
}

/** What `api-latency.js --live-only` reports: the live part alone, on an empty store. */
export interface LiveOnlyReport extends ReportHeader {
  readonly benchmark: 'api-latency-live';
  readonly daemon: {
    readonly startupSeconds: number;
    readonly capture: string;
    readonly finalizeGraceMs: number;
    readonly healthAtEnd: unknown;
    /** The daemon's cnirec_tracer_* metrics at the end. */
    readonly tracerMetrics: Record<string, number>;
  };
  readonly live: LiveResult;
  readonly liveBusy: LiveResult | null;
  readonly memory: { readonly afterStartup: ProcMemory | null; readonly afterLive: ProcMemory | null };
  readonly verdict: Verdict;
}

export function liveOnlyMarkdown(r: LiveOnlyReport): string {
  const m = r.machine;
  const out: string[] = ['# API latency benchmark, live part only', ''];
  out.push(
    `${r.date}, ${m.nproc} × ${m.cpuModel}, ${m.memoryGiB} GiB, ${m.os}, kernel ${m.kernel}, Node ${m.node}, ${m.bpftrace}.`,
    `Load average when it started: ${m.loadAverageAtStart.map((x) => x.toFixed(2)).join(' ')}.`,
    `Command: \`${r.command}\`; whole run ${f1(r.durationSeconds)} s. The daemon (\`cnirec run --capture ${r.daemon.capture}\`, real bpftrace) runs on an empty store, ` +
      'ready in ' + `${f1(r.daemon.startupSeconds)} s; no data set, no REST scenarios (\`api-latency.md\` has the full benchmark).`,
    '',
    `exec → websocket \`call.started\` p99 ≤ ${TARGETS.liveStartedP99Ms} ms: ${yes(r.verdict.met)} (${r.verdict.detail}).`,
    '',
  );
  out.push(...liveSections(r.live, r.liveBusy, r.daemon.finalizeGraceMs, r.verdict));
  const gauges = Object.entries(r.daemon.tracerMetrics).filter(([k]) => !k.endsWith('_total'));
  if (gauges.length > 0) {
    out.push('Tracer gauges at the end (`/metrics`): ' + gauges.map(([k, v]) => `\`${k}\` ${Number(v.toPrecision(4))}`).join(', ') + '.', '');
  }
  const mem = (x: ProcMemory | null) => (x ? `VmRSS ${f1(x.vmRssMiB)} MiB, VmHWM ${f1(x.vmHwmMiB)} MiB` : '–');
  out.push(`Daemon memory: after startup ${mem(r.memory.afterStartup)}; after the live part ${mem(r.memory.afterLive)}.`, '');
  return `${out.join('\n')}\n`;
}

function visited(s: StoreDiagnostic): string {
  if (s.rowsVisitedPerPage === null) return '–';
  const others = Object.entries(s.rowsVisitedByOtherIndexes)
    .map(([index, n]) => `; ${index} would pass ${n ?? '?'}`)
    .join('');
  return `${s.rowsVisitedPerPage.toLocaleString('en-US')}${others}`;
}

function liveTable(l: LiveResult, target: string): string[] {
  const out = ['| from just before spawn to | p50 | p90 | p99 | max | n | target |', '|---|---|---|---|---|---|---|'];
  const row = (name: string, x: Distribution | null, t: string) =>
    x ? `| ${name} | ${f1(x.p50)} | ${f1(x.p90)} | ${f1(x.p99)} | ${f1(x.max)} | ${x.n} | ${t} |` : `| ${name} | – | – | – | – | 0 | ${t} |`;
  out.push(row('`call.started` received', l.startedMs, target));
  out.push(row('plugin exited', l.exitMs, ''));
  out.push(row('`call.finished` received', l.finishedMs, '(none)'));
  out.push(row('`call.started` after the exit', l.startedAfterExitMs, ''));
  out.push(row('`call.finished` after the exit', l.finishedAfterExitMs, ''));
  const recExec = l.samples.flatMap((s) => (s.recordedExecMs === null ? [] : [s.recordedExecMs]));
  const recExit = l.samples.flatMap((s) => (s.recordedExitMs === null ? [] : [s.recordedExitMs]));
  if (recExec.length > 0) out.push(row('exec, as recorded (call startedAt, ms resolution)', distribution(recExec), ''));
  if (recExit.length > 0) out.push(row('exit, as recorded (call endedAt, ms resolution)', distribution(recExit), ''));
  out.push(
    '',
    `Plugin failures: ${l.pluginFailures}; \`call.started\` never received: ${l.missingStarted}; \`call.finished\` never received: ${l.missingFinished}; ` +
      `\`call.started\` received before the plugin had exited: ${l.startedBeforeExit} of ${l.samples.length}` +
      `${l.cpu ? `; others' CPU meanwhile ${Math.round(l.cpu.foreign * 100)}%` : ''}.`,
    '',
  );
  return out;
}

/**
 * Per scenario over the REST target at concurrency 1: how its median splits
 * into SQLite, response building (mapping + the route's serializer) and the rest
 * (fastify, loopback, client), from the medians above. Medians, because
 * one-off stalls from other work on the machine make p99 differences noise.
 */
function breakdown(r: Report): string[] {
  const lines: string[] = [];
  const floor = r.http.find((h) => h.scenario === 'healthz' && h.concurrency === 1)?.latencyMs.p50 ?? Number.NaN;
  for (const h of r.http.filter((x) => x.concurrency === 1 && x.scenario !== 'healthz')) {
    if (h.latencyMs.p99 <= TARGETS.restP99Ms) continue;
    const s = r.store.find((x) => x.scenario === h.scenario);
    if (!s) continue;
    const sqlite = s.storeMs.p50;
    const built = s.storeAndRouteMs.p50;
    const rest = Math.max(0, h.latencyMs.p50 - built);
    const parts: Array<[string, number]> = [
      ['SQLite (store call)', sqlite],
      ['building the response (mapping, serializer)', Math.max(0, built - sqlite)],
      [`HTTP (fastify, loopback, client; /healthz floor ${f2(floor)} ms)`, rest],
    ];
    const top = [...parts].sort((a, b) => b[1] - a[1])[0]!;
    const plan = Object.entries(s.plans)
      .map(([k, v]) => `${k}: ${v.join('; ')}`)
      .join(' / ');
    lines.push(
      `- **${h.scenario}** (p50 ${f2(h.latencyMs.p50)} ms, p99 ${f2(h.latencyMs.p99)} ms, ${h.itemsPerResponse} items, ${f1(h.bytesPerResponse / 1024)} KiB): ` +
        parts.map(([k, v]) => `${k} ~${f2(v)} ms`).join(', ') +
        `; largest: ${top[0]}.${top[0].startsWith('SQLite') && plan ? ` Plan: ${plan}.` : ''}` +
        (s.rowsVisitedPerPage !== null ? ` The index walk passes ${visited(s)} rows for a page of ${s.rowsPerQuery}.` : ''),
    );
  }
  if (lines.length === 0) return [];
  return [
    'Scenarios over the target at concurrency 1, their median split (from the table above). The parts come from two processes ' +
      "measured at different moments on a shared machine, so they need not add up; a part shown as ~0 means the in-process steps alone took as long as the daemon's whole answer.",
    '',
    ...lines,
    '',
  ];
}

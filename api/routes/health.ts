/**
 * GET /healthz: "ok" when the tracer records and the store writes,
 * "degraded" otherwise, with `problems` saying why in sentences an operator
 * can act on and the numbers behind them; and the CNI cache watcher's state
 * (null when the daemon watches no cache directory), and the container
 * runtime's (present/runtime-health.ts: absent or down is the node's state,
 * not degraded; only cnirec's own setup that keeps it from asking is).
 *
 * Plain /healthz answers 200 whenever the daemon answers at all: a degraded
 * daemon still serves what it has, so only a wedged process (no answer)
 * should get it restarted — that is the liveness probe. `?probe=readiness`
 * answers 503 (same body) while the tracer is not recording (starting,
 * restarting, given up): a node where nothing is recorded is not ready, and
 * a DaemonSet rollout of a version whose tracer cannot start stops there.
 * A full disk is not a readiness failure: the API still serves.
 */

import type { FastifyInstance, FastifySchemaCompiler } from 'fastify';
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { CaptureStatus, TracerStatus } from '../../collector/index.js';
import type { OtelExportStatus } from '../../otel/index.js';
import type { StoreStatus } from '../../store/index.js';
import type { HealthDeps } from '../deps.js';
import { plainJsonSerializer } from '../present/fast-json.js';
import { createLossWindow, LOSS_WINDOW_MS } from '../present/loss-window.js';
import { runtimeHealth, runtimeProblems } from '../present/runtime-health.js';
import { errorResponses } from '../schemas/error.js';
import { healthQuerySchema, healthSchema, type Health } from '../schemas/health.js';

const zodValidator = validatorCompiler as FastifySchemaCompiler<unknown>;

/** How often the tracer's lost-record total is sampled for the window, between probes. */
const LOSS_SAMPLE_MS = 5_000;

export function registerHealth(app: FastifyInstance, deps: HealthDeps): void {
  const losses = createLossWindow(Date.now());
  const sampleLosses = () => losses.observe(deps.tracerStatus().lostEvents, Date.now());
  const sampler = setInterval(sampleLosses, LOSS_SAMPLE_MS).unref();
  app.addHook('onClose', async () => clearInterval(sampler));

  app.withTypeProvider<ZodTypeProvider>().get(
    '/healthz',
    {
      schema: {
        tags: ['health'],
        operationId: 'getHealth',
        summary: 'Whether the daemon records and stores: ok or degraded, why, and the numbers behind it',
        description:
          'Always 200 while the daemon answers (a liveness probe), degraded or not; with probe=readiness, 503 (same body) while the tracer is not recording. ' +
          'Degraded while the tracer is not recording, the database refuses writes, OpenTelemetry export fails, the tracer lost records within the last 10 minutes, ' +
          "or cnirec's own setup keeps it from asking the container runtime (its socket may not be opened, or --cri-endpoint names no CRI runtime); a runtime that is absent or down is reported in `runtime`, not degraded. Needs no token.",
        querystring: healthQuerySchema,
        response: { 200: healthSchema, 503: healthSchema, ...errorResponses(400) },
        security: [],
      },
      // Documented by the schema (a test checks the body against it); sent as built, nested status objects whole.
      serializerCompiler: plainJsonSerializer,
      // Its own, so the route validates the same wherever it is registered (tests register it alone).
      validatorCompiler: zodValidator,
    },
    async (request, reply): Promise<Health> => {
      const nowMs = Date.now();
      const tracer = deps.tracerStatus();
      const store = deps.storeStatus();
      const stats = deps.collectorStats();
      losses.observe(tracer.lostEvents, nowMs);
      const recentLostEvents = losses.recent(nowMs);
      const recording = tracer.running && tracer.ready;
      if (request.query.probe === 'readiness' && !recording) void reply.code(503);
      const otel = deps.otelStatus?.() ?? null;
      const capture = deps.capture?.status() ?? null;
      const runtime = deps.runtime?.view() ?? null;
      const problems = [...healthProblems(tracer, store, recentLostEvents), ...otelProblems(otel), ...captureProblems(capture), ...runtimeProblems(runtime)];
      const lastRecordAgeMs = tracer.lastRecordAt === null ? null : nowMs - Date.parse(tracer.lastRecordAt);
      // The CNI cache. Problems and findings are the node's, not the daemon's: they do not make it degraded.
      const cache = deps.cache?.status?.() ?? null;
      return {
        status: problems.length === 0 ? 'ok' : 'degraded',
        problems,
        tracer: { ...tracer, capture, lastEventAgeMs: lastRecordAgeMs, recentLostEvents, lostEventsWindowMs: LOSS_WINDOW_MS },
        calls: { ...stats, oldestRunningAgeMs: stats.oldestRunningStartUs === null ? null : Math.max(0, Math.round(Date.now() - stats.oldestRunningStartUs / 1000)) },
        store: { ...store },
        cache: cache === null ? null : { ...cache, lastRescanAgeMs: cache.lastRescanAt === null ? null : Date.now() - Date.parse(cache.lastRescanAt) },
        // Retention: the limits, the last run and the longest write stall. Being over the limit is the operator's to fix, not "degraded".
        retention: retentionView(deps),
        // OpenTelemetry export; null when the daemon exports nothing.
        otel: otel === null ? null : { ...otel },
        // The container runtime (CRI); null when the daemon asks none. Absent or down is the node's state, not degraded.
        runtime: runtime === null ? null : runtimeHealth(runtime, nowMs),
      };
    },
  );
}

function retentionView(deps: HealthDeps) {
  const r = deps.retentionStatus?.() ?? null;
  const writes = deps.writeTiming?.stats() ?? null;
  if (r === null) return null;
  return {
    enabled: r.enabled,
    maxAgeMs: r.maxAgeMs,
    maxDbBytes: r.maxDbBytes,
    intervalMs: r.intervalMs,
    running: r.running,
    runs: r.runs,
    sizeRuns: r.sizeRuns,
    lastRun: r.lastRun,
    lastRunAgeMs: r.lastRun === null ? null : Date.now() - Date.parse(r.lastRun.startedAt),
    lastError: r.lastError,
    deletedTotal: r.deletedTotal,
    size: r.size,
    autoVacuum: r.autoVacuum,
    longestWrite: writes === null ? null : { seconds: writes.maxSeconds, kind: writes.maxKind, at: writes.maxAt },
  };
}

/** A collector that does not take what is sent: calls still record, and wait in the database for it. */
export function otelProblems(otel: OtelExportStatus | null): string[] {
  if (otel === null || otel.failingSince === null) return [];
  const error = otel.traces?.lastError ?? otel.logs?.lastError ?? 'unknown error';
  return [
    `OpenTelemetry export fails since ${otel.failingSince} (${error}); ${otel.backlog} calls and events wait in the database and are sent when the collector takes them again.`,
  ];
}

/** Why the daemon is degraded; empty when it records and stores. `recentLostEvents`: records lost within the loss window. */
export function healthProblems(tracer: TracerStatus, store: StoreStatus, recentLostEvents = 0): string[] {
  const problems: string[] = [];
  if (!tracer.running || !tracer.ready) {
    const gap = tracer.lastGap?.endedAt === null ? tracer.lastGap : null;
    const standbyRecords = tracer.standby?.running === true && tracer.standby.ready;
    const meanwhile = !standbyRecords
      ? 'Calls made meanwhile are not recorded.'
      : tracer.mode === 'full'
        ? 'The standby tracer records calls meanwhile (exec, exit, tree), without their payloads; calls it cut are marked lostRecords.'
        : 'The standby tracer records calls meanwhile.';
    problems.push(
      gap
        ? `The tracer is not recording since ${gap.startedAt} (${gap.reason}); it is being restarted. ${meanwhile}`
        : `The tracer is not recording${tracer.lastError ? ` (${tracer.lastError})` : ''}. ${meanwhile}`,
    );
  }
  if (recentLostEvents > 0) {
    problems.push(
      `The tracer lost ${recentLostEvents.toLocaleString('en-US')} records in the last ${LOSS_WINDOW_MS / 60_000} minutes (${tracer.lostEvents.toLocaleString('en-US')} since the daemon started): ` +
        'bpftrace could not keep up, so calls may be missing or incomplete (those it could tell are marked lostRecords). ' +
        'Raise --perf-buffer-pages, give the daemon more CPU, or use --capture light on a node this busy.',
    );
  }
  if (!store.writable) {
    const kept = `${store.pendingWrites} calls are kept in memory and retried every second`;
    const dropped = store.droppedWrites > 0 ? `; ${store.droppedWrites} were dropped because the queue was full` : '';
    problems.push(`The database cannot be written since ${store.failingSince ?? 'recently'}: ${store.lastError ?? 'unknown error'} ${kept}${dropped}.`);
  }
  return problems;
}

/** A switch the policy wants but bpftrace refused: payloads the operator counts on are not being captured. */
function captureProblems(capture: CaptureStatus | null): string[] {
  if (capture === null || capture.lastError === null) return [];
  return [`the tracer could not be switched to ${capture.mode} capture (${capture.reason}); retrying: ${capture.lastError}`];
}

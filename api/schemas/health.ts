/**
 * GET /healthz: whether the daemon records and stores, in sentences and in
 * numbers. Nested parts are open objects (looseObject): the daemon's own
 * status types, documented here by their main fields; more may appear.
 */

import { z } from 'zod';
import { RUNTIME_PROBLEM_KINDS } from '../../collector/index.js';
import { component } from './registry.js';
import { tracerStatusSchema } from './tracer.js';

export const healthQuerySchema = z.strictObject({
  probe: z
    .enum(['liveness', 'readiness'])
    .optional()
    .describe('readiness: answer 503 while the tracer is not recording; liveness (the default): 200 whenever the daemon answers'),
});

export const healthSchema = component(
  'Health',
  z.object({
    status: z.enum(['ok', 'degraded']),
    problems: z.array(z.string()).describe('Why it is degraded, one sentence each, with what to do; empty when ok'),
    tracer: tracerStatusSchema
      .omit({ modeSwitchable: true })
      .extend({
        lastEventAgeMs: z.number().nullable().describe('Since the tracer last printed a record'),
        recentLostEvents: z.number().int().describe('Records lost within the last lostEventsWindowMs: while above 0 the daemon is degraded'),
        lostEventsWindowMs: z.number().int(),
      })
      .loose(),
    calls: z
      .looseObject({
        openCalls: z.number().int(),
        oldestRunningAgeMs: z.number().nullable().describe('How long the oldest plugin still running has run: a hung plugin'),
        callsStarted: z.number().int(),
        callsFinished: z.number().int(),
        callsMarked: z
          .record(z.string(), z.number().int())
          .optional()
          .describe(
            'Calls published marked lostRecords, by the first cause: tracer-lost (bpftrace dropped records while the call ran: raise --perf-buffer-pages), ' +
              'payload-tracer-cut (the tracer supplying its bytes stopped or lost its exit), payloads-never-came (payload records its exits announced never came), ' +
              'early-overflow (more records came ahead of its exec than are kept), out-of-order (its plugin’s exec came after its own)',
          ),
      })
      .describe('The collector'),
    store: z
      .looseObject({
        writable: z.boolean(),
        lastError: z.string().nullable(),
        failingSince: z.string().nullable(),
        pendingWrites: z.number().int(),
        droppedWrites: z.number().int(),
        databaseBytes: z.number().int(),
      })
      .describe('The database'),
    cache: z
      .looseObject({
        running: z.boolean(),
        watchedDirs: z.number().int(),
        entries: z.number().int(),
        problems: z.number().int(),
        openFindings: z.record(z.string(), z.number().int()).describe('Open findings by kind'),
        lastRescanAgeMs: z.number().nullable(),
      })
      .nullable()
      .describe("libcni's cache watcher; null when the daemon watches no cache directory"),
    retention: z
      .looseObject({ enabled: z.boolean(), maxAgeMs: z.number(), maxDbBytes: z.number(), lastRunAgeMs: z.number().nullable() })
      .nullable()
      .describe('Retention: its limits, last run and the longest write stall; null when none runs'),
    otel: z
      .looseObject({ failingSince: z.string().nullable(), backlog: z.number().int() })
      .nullable()
      .describe('OpenTelemetry export: its state, what it sent, dropped and failed, and its lag; null when the daemon exports nothing'),
    runtime: z
      .object({
        endpoint: z.string().nullable().describe('The CRI socket asked'),
        reachable: z.boolean().describe('It answered the last poll'),
        errorKind: z.enum(RUNTIME_PROBLEM_KINDS).nullable().describe('Why not: off (--cri-endpoint none), absent, refused, denied, timeout, not-cri, v1alpha2-only, error'),
        error: z.string().nullable(),
        lastCheckedAt: z.string().nullable().describe('The last poll; null before the first'),
        lastCheckedAgeMs: z.number().nullable(),
        answeringSince: z.string().nullable(),
      })
      .nullable()
      .describe(
        "The container runtime (CRI), as GET /api/v1/node/runtime says in full; null when the daemon asks none. Absent or down is the node's state, not degraded; denied and not-cri (cnirec's own setup) make the daemon degraded",
      ),
  }),
);

export type Health = z.infer<typeof healthSchema>;

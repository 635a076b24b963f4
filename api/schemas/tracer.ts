/** GET /api/v1/tracer and PUT /api/v1/tracer/mode: what the tracer is doing, and switching its capture mode. */

import { z } from 'zod';
import { component } from './registry.js';

export const CAPTURE_MODES = ['full', 'light'] as const;

export const tracerStatusSchema = component(
  'TracerStatus',
  z.object({
    running: z.boolean(),
    ready: z.boolean().describe('The tracer has seen the collector’s own probe: calls are being recorded'),
    mode: z.enum(CAPTURE_MODES).describe('full: with stdin/stdout/stderr bytes; light: without payloads'),
    pid: z.number().int().nullable().describe('bpftrace’s pid'),
    restarts: z.number().int(),
    lostEvents: z.number().int(),
    malformedLines: z.number().int(),
    lastRecordAt: z.string().nullable(),
    startedAt: z.string().nullable(),
    lastError: z.string().nullable(),
    handoffInProgress: z.boolean().describe('A previous tracer is still finishing its calls after a mode switch'),
    gaps: z.number().int().describe('Times no tracer recorded (bpftrace went away and was restarted), the current one included'),
    gapSeconds: z.number().describe('Seconds without a recording tracer over all gaps'),
    lastGap: z
      .object({
        startedAt: z.string(),
        endedAt: z.string().nullable().describe('null while the gap lasts'),
        reason: z.string(),
        incompleteCalls: z.number().int().describe('Calls in flight when the tracer went away, stored as incomplete'),
      })
      .nullable()
      .describe('The current gap, else the last one'),
    reorderWindowMs: z
      .number()
      .describe('How far (ms) the tracer’s output must move past a record before it goes on, for records of other CPUs that may still come; follows arrivalLagMs, so it is what the live tail waits at least'),
    arrivalLagMs: z.number().describe('The largest delay over the last seconds between a record’s kernel timestamp and its arrival in the daemon (ms)'),
    standby: z
      .object({
        running: z.boolean(),
        ready: z.boolean(),
        pid: z.number().int().nullable(),
        restarts: z.number().int(),
        rssBytes: z.number().int().nullable().describe('Its resident memory now: the standby’s cost (bench/results/standby-tracer.md)'),
        cpuSeconds: z.number().nullable().describe('CPU time it used since it started'),
        lastError: z.string().nullable(),
      })
      .nullable()
      .describe(
        'The sched-only tracer beside the main one: execs, forks and exits, so a call is recorded (without payloads) while the main tracer restarts, and the main one covers its restarts. null when the daemon runs none',
      ),
    modeSwitchable: z.boolean().describe('PUT /api/v1/tracer/mode is available on this daemon'),
  }),
);

export const captureModeBodySchema = z.strictObject({
  mode: z.enum(CAPTURE_MODES).describe('full: payload bytes too; light: exec, env, exit, timing and helpers only'),
});

export type TracerStatusBody = z.infer<typeof tracerStatusSchema>;

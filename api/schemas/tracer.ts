/** GET /api/v1/tracer and PUT /api/v1/tracer/mode: what the tracer is doing, and switching its capture mode. */

import { z } from 'zod';
import { component } from './registry.js';

export const CAPTURE_MODES = ['full', 'light'] as const;
/** What an operator can ask for: a mode, or `auto` (light until payloads pay off). */
export const CAPTURE_SETTING_VALUES = ['auto', 'full', 'light'] as const;

export const captureScopeSchema = z.object({
  namespace: z.string(),
  pod: z.string().nullable().describe('null: every pod of the namespace'),
});

export const captureStatusSchema = component(
  'CaptureStatus',
  z.object({
    setting: z.enum(CAPTURE_SETTING_VALUES).describe('The setting in force: an operator’s while it lasts, else the configured one'),
    configured: z.enum(CAPTURE_SETTING_VALUES).describe('The configured setting (--capture)'),
    mode: z.enum(CAPTURE_MODES).describe('What the tracer runs now: full while payloads are captured'),
    reason: z.string().describe('Why, in words'),
    until: z.string().nullable().describe('When this lapses by itself (auto’s quiet window, an operator’s --for); null: it does not'),
    scope: captureScopeSchema.nullable().describe('While set, only these calls keep their payloads'),
    switching: z.boolean().describe('The tracer is being switched to `mode`'),
    lastError: z.string().nullable().describe('Why the last switch failed (it is retried)'),
  }),
);

export const tracerStatusSchema = component(
  'TracerStatus',
  z.object({
    running: z.boolean(),
    ready: z.boolean().describe('The tracer has seen the collector’s own probe: calls are being recorded'),
    mode: z.enum(CAPTURE_MODES).describe('full: with stdin/stdout/stderr bytes; light: without payloads'),
    payloadPath: z
      .enum(['syscall-exit', 'syscall-entry'])
      .nullable()
      .describe(
        'How full mode takes payloads: syscall-exit (one probe, the bytes really moved), or syscall-entry (the fallback when the start-up check finds the exit probe misreading on this kernel: what was attempted, fds 0-2 only); null in light mode',
      ),
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
    capture: captureStatusSchema.nullable().describe('The capture policy (auto, full, light) and why the tracer runs its mode; null on a daemon without one'),
  }),
);

/** At most a week: a forgotten `full` should not tax the node forever by accident (`cnirec capture full` with no --for does). */
const MAX_CAPTURE_FOR_SECONDS = 7 * 24 * 3600;

export const captureModeBodySchema = z
  .strictObject({
    mode: z.enum(CAPTURE_SETTING_VALUES).describe('auto: light until a call fails, hangs or loops, then full for the quiet window; full: payload bytes too; light: exec, env, exit, timing and helpers only'),
    forSeconds: z.number().int().min(1).max(MAX_CAPTURE_FOR_SECONDS).optional().describe('For how long; then back to the configured setting. Absent: until changed'),
    namespace: z.string().min(1).max(253).optional().describe('With mode full: keep payloads of this namespace’s calls only'),
    pod: z
      .string()
      .regex(/^[^/\s]+\/[^/\s]+$/, 'must be NAMESPACE/NAME')
      .optional()
      .describe('With mode full: keep payloads of this pod’s calls only (NAMESPACE/NAME)'),
  })
  .refine((b) => b.namespace === undefined || b.pod === undefined, { message: 'give pod or namespace, not both', path: ['pod'] })
  .refine((b) => (b.namespace === undefined && b.pod === undefined) || b.mode === 'full', { message: 'a pod or namespace scope needs mode full', path: ['mode'] });

export type CaptureModeBody = z.infer<typeof captureModeBodySchema>;

export type TracerStatusBody = z.infer<typeof tracerStatusSchema>;

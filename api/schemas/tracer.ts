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
    modeSwitchable: z.boolean().describe('PUT /api/v1/tracer/mode is available on this daemon'),
  }),
);

export const captureModeBodySchema = z.strictObject({
  mode: z.enum(CAPTURE_MODES).describe('full: payload bytes too; light: exec, env, exit, timing and helpers only'),
});

export type TracerStatusBody = z.infer<typeof tracerStatusSchema>;

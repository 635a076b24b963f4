/**
 * GET /api/v1/node/cni/status: CNI STATUS readiness per network, from the
 * heartbeats runtimes send (containerd 2.0.1 and later run STATUS on every
 * plugin of every 1.1.0 network on each CRI Status). Also the tail's
 * `network.readiness` message.
 */

import { z } from 'zod';
import { component } from './registry.js';

const cniErrorSchema = z
  .object({
    code: z.number().int().nullable().describe('The CNI error code (50: plugin not available, 51: … and existing containers may be damaged); null until a failing answer was captured with payloads'),
    msg: z.string().nullable().describe('The plugin’s message; null until a failing answer was captured with payloads (auto turns them on at the first failure)'),
    details: z.string().nullable(),
  })
  .describe('The failing answer’s CNI error (its stdout)');

const latencySchema = z
  .object({
    p50Ms: z.number().nullable().describe('From a histogram: the upper bound of the bucket the median falls in (never above maxMs)'),
    p99Ms: z.number().nullable(),
    maxMs: z.number().nullable(),
    meanMs: z.number().nullable(),
  })
  .describe('How long STATUS took, over every check recorded');

export const readinessTransitionSchema = component(
  'ReadinessTransition',
  z
    .object({
      at: z.string(),
      ready: z.boolean(),
      plugin: z.string().describe('The plugin whose answer made the change'),
      code: z.number().int().nullable(),
      msg: z.string().nullable(),
      callId: z.string().nullable().describe('The STATUS call that answered (kept whole); GET /api/v1/calls/{id}'),
    })
    .describe('The network became ready or not ready (or answered for the first time)'),
);

const pluginReadinessSchema = z.object({
  plugin: z.string(),
  ready: z.boolean(),
  since: z.string(),
  lastCheckedAt: z.string(),
  checks: z.number().int(),
  failures: z.number().int(),
  exitCode: z.number().int().nullable(),
  error: cniErrorSchema.nullable(),
  lastCallId: z.string().nullable().describe('The last of its STATUS calls that was kept whole'),
  latency: latencySchema,
});

export const networkReadinessSchema = component(
  'NetworkReadiness',
  z
    .object({
      network: z.string().nullable().describe('null: STATUS calls whose network is not known (no stdin captured, no conf lists the plugin)'),
      ready: z.boolean().nullable().describe('Every plugin’s last STATUS succeeded; null when none was asked'),
      since: z.string().nullable(),
      lastCheckedAt: z.string().nullable(),
      plugin: z.string().nullable().describe('The failing plugin; null while ready'),
      error: cniErrorSchema.nullable(),
      checks: z.number().int().describe('STATUS calls recorded, of all its plugins'),
      latency: latencySchema,
      plugins: z.array(pluginReadinessSchema),
      transitions: z.array(readinessTransitionSchema).describe('Newest first (the last 50)'),
    })
    .describe('A CNI network’s readiness, as its plugins answer STATUS'),
);

export const readinessListSchema = z.object({ items: z.array(networkReadinessSchema) });

export type NetworkReadinessView = z.infer<typeof networkReadinessSchema>;
export type ReadinessList = z.infer<typeof readinessListSchema>;

/**
 * GET /api/v1/calls/:id: one call in full. The CallSummary fields, then
 * everything a summary leaves out: the exact payloads, what they parse to,
 * the recorded environment, the delegated calls and the helpers.
 */

import { z } from 'zod';
import { cacheEntrySchema } from './cache.js';
import { callSummarySchema } from './call-summary.js';
import { helperSchema } from './helper.js';
import { kernelChangeSchema } from './kernel.js';
import { payloadSchema } from './payload.js';
import { component } from './registry.js';

/** Where a call's config and result come from: the plugin's own pipes, or libcni's cache when no payloads were captured. */
export const PAYLOAD_SOURCES = ['pipe', 'cache'] as const;

export const callDetailSchema = component(
  'CallDetail',
  callSummarySchema
    .extend({
      argv: z.array(z.string()),
      execChain: z
        .array(z.string())
        .describe('Every image the plugin process ran, in order: a wrapper that exec’d the real plugin in place, then it (the call is named after the last plugin)'),
      env: z.record(z.string(), z.string()).describe('CNI_* and trace-context variables only, as recorded'),
      cniArgs: z.string().nullable().describe('CNI_ARGS'),
      stdin: payloadSchema,
      stdout: payloadSchema,
      stderr: payloadSchema,
      config: z.unknown().describe('stdin parsed as JSON (the network configuration); without payloads (light capture), the conf/conflist of the libcni cache entry linked to this call; null when neither is there'),
      configSource: z.enum(PAYLOAD_SOURCES).nullable().describe('pipe: config is what the plugin read on stdin; cache: from the linked libcni cache entry (the whole conf/conflist, not the bytes this plugin read); null: no config'),
      result: z.unknown().describe('stdout parsed as JSON (the CNI result or error); without payloads, the result libcni cached for the ADD linked to this call; null when neither is there'),
      resultSource: z.enum(PAYLOAD_SOURCES).nullable().describe('pipe: result is what the plugin wrote on stdout; cache: the chain\'s final result from the linked libcni cache entry; null: no result'),
      children: z.array(callSummarySchema).describe('Calls this one delegated to (host-local under bridge…), oldest first'),
      helpers: z.array(helperSchema).describe('Non-plugin programs the call ran, in order'),
      changes: z
        .array(kernelChangeSchema)
        .nullable()
        .describe("What the call's processes changed in the kernel, in order (links, addresses, routes, sysctls, iptables rules…; reads left out; its delegates' changes are in their own calls); null when its capture did not take them (light mode), [] when nothing changed"),
      cache: cacheEntrySchema
        .nullable()
        .describe(
          "libcni's cache entry for this call's attachment (container, ifname, network): the version this call wrote or removed, else the one nearest in time; null for delegated calls, VERSION probes, or when none was seen",
        ),
    })
    .describe('CallDetail'),
);

export type CallDetail = z.infer<typeof callDetailSchema>;

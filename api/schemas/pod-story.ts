/**
 * GET /api/v1/pods/:namespace/:name: everything CNI did for one pod, as
 * trees (a runtime's call, the calls it delegated, the helpers each ran),
 * oldest first, and again grouped by sandbox with the time each command took.
 */

import { z } from 'zod';
import { cacheEntrySchema } from './cache.js';
import { findingSchema } from './findings.js';
import { callSummarySchema, podRefSchema, type CallSummary } from './call-summary.js';
import { helperSummarySchema, type HelperSummary } from './helper.js';
import { component } from './registry.js';
import { sandboxRuntimeSchema } from './runtime.js';

export interface CallTree extends CallSummary {
  children: CallTree[];
  helpers: HelperSummary[];
}

// Recursive: a getter defers the reference, and the registry id lets the
// OpenAPI document point back at the component instead of nesting forever.
export const callTreeSchema: z.ZodType<CallTree> = component(
  'CallTree',
  callSummarySchema
    .extend({
      get children(): z.ZodArray<z.ZodType<CallTree>> {
        return z.array(callTreeSchema).describe('Calls this one delegated to, oldest first, each with its own children');
      },
      helpers: z.array(helperSummarySchema).describe('Non-plugin programs the call ran, in order'),
    })
    .describe('CallTree: a CallSummary with its delegated calls and helpers'),
);

const totalsSchema = z
  .record(z.string(), z.number())
  .describe('Milliseconds per CNI command, summed over top-level calls that ended ({"ADD": 41.2, "DEL": 12.9})');

export const sandboxSchema = component(
  'Sandbox',
  z.object({
    containerId: z.string().nullable().describe('CNI_CONTAINERID; null groups calls that had none'),
    podUid: z.string().nullable().describe('The pod UID its calls carried'),
    startedAt: z.string().describe('When its first call started (ISO 8601)'),
    calls: z.array(callTreeSchema).describe('Top-level calls in this sandbox, oldest first'),
    totals: totalsSchema,
    cache: z
      .array(cacheEntrySchema)
      .describe("libcni's cache entries for this sandbox, every version seen (rewritten and removed ones too), oldest first; empty when caches are not watched"),
    findings: z
      .array(findingSchema)
      .describe('Open findings about this sandbox (its DEL or ADD looping, a stale cache entry, a leaked IP…), worst first, then oldest; the same as GET /api/v1/findings lists'),
    runtime: sandboxRuntimeSchema
      .nullable()
      .describe('What the container runtime says of this sandbox (the last it said, once it no longer lists it); null when it never listed it or the daemon does not ask it'),
  }),
);

export const podStorySchema = component(
  'PodStory',
  z.object({
    pod: podRefSchema.extend({
      uids: z.array(z.string()).describe('Every UID seen under this name, oldest first: more than one when the name was reused'),
    }),
    calls: z.array(callTreeSchema).describe('Top-level calls (made by the runtime), oldest first'),
    sandboxes: z.array(sandboxSchema).describe('The same calls grouped by sandbox, in order of their first call'),
    totals: totalsSchema,
    truncated: z
      .boolean()
      .describe(
        'True when the pod has more than 10,000 calls (a runaway ADD/DEL loop): the story keeps the newest 10,000; GET /api/v1/calls?namespace=&pod= pages through all of them',
      ),
  }),
);

export type Sandbox = z.infer<typeof sandboxSchema>;
export type PodStory = z.infer<typeof podStorySchema>;

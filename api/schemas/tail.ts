/**
 * WS /api/v1/tail: its connect query and every message, as schemas. The
 * tail's code takes its types from here (api/tail/tail-messages.ts), the
 * OpenAPI document describes them (the route's 101 response), and clients
 * (the CLI) import the same types.
 */

import { z } from 'zod';
import { captureStatusSchema } from './tracer.js';
import { cacheAttachmentFields } from './cache.js';
import { CNI_COMMANDS } from './call-query.js';
import { callSummarySchema } from './call-summary.js';
import { networkReadinessSchema } from './readiness.js';
import { runtimeStatusSchema } from './runtime.js';
import { issueSchema } from './error.js';
import { booleanParam, nameParam } from './params.js';
import { component } from './registry.js';
import { timeParam } from './time-param.js';

/** The same values as GET /api/v1/calls takes (upper case, as CNI_COMMAND is): one rule for both. */
const command = z.enum(CNI_COMMANDS).describe('CNI_COMMAND');

/**
 * The filter of a `filter` message, and as the server echoes it: JSON
 * booleans, strict, so a typo in a field name is reported instead of
 * silently widening the tail.
 */
export const tailFilterSchema = component(
  'TailFilter',
  z
    .strictObject({
      namespace: nameParam('Pod namespace (K8S_POD_NAMESPACE)').optional(),
      pod: nameParam('Pod name (K8S_POD_NAME)').optional(),
      command: command.optional(),
      plugin: nameParam('Plugin binary name').optional(),
      failed: z.boolean().optional().describe('true: calls that ended badly; false: calls that succeeded'),
      includeVersion: z.boolean().optional().describe('Include VERSION probes'),
    })
    .describe('Which calls (and cache changes) a client follows; absent fields do not narrow'),
);

/**
 * The connect query. Strict, like the REST queries: an unknown parameter
 * (a typo such as `namepsace`) is refused by name rather than silently
 * widening the tail. A repeated parameter arrives as an array and is
 * refused by the string schemas, naming the field.
 */
export const tailQuerySchema = z.strictObject({
  namespace: nameParam('Pod namespace (K8S_POD_NAMESPACE)').optional(),
  pod: nameParam('Pod name (K8S_POD_NAME)').optional(),
  command: command.optional(),
  plugin: nameParam('Plugin binary name').optional(),
  failed: booleanParam('true: calls that ended badly; false: calls that succeeded').optional(),
  includeVersion: booleanParam('Include VERSION probes').optional(),
  since: timeParam('Replay calls started at or after this first (then replay.done), then go live').optional(),
});

export const tailCacheEntrySchema = component(
  'TailCacheEntry',
  z.object({
    path: z.string(),
    dir: z.string(),
    format: z.enum(['cniCacheV1', 'legacy']).nullable().describe('Null in a removal of a file the daemon never saw'),
    ...cacheAttachmentFields,
    result: z.unknown().describe('The cached result'),
    writtenAt: z.string().nullable().describe("The file's mtime: when libcni wrote it (ISO 8601)"),
    at: z.string().describe('When the daemon saw the change (ISO 8601)'),
  }),
);

export const tailGapSchema = component(
  'TailGap',
  z
    .object({
      startedAt: z.string(),
      endedAt: z.string().nullable().describe('null: the tracer has just gone away; set when it records again'),
      durationMs: z.number().nullable(),
      reason: z.string(),
      incompleteCalls: z.number().int().describe('Calls in flight when the tracer went away; each also comes as a call.finished with status incomplete'),
    })
    .describe('A stretch with no recording tracer: sent to every client, whatever its filter'),
);

export const tailConfChangeSchema = component(
  'TailConfChange',
  z
    .object({
      path: z.string(),
      dir: z.string(),
      change: z.enum(['added', 'changed', 'removed']),
      network: z.string().nullable().describe('The network it defines now (null when removed or unparsable)'),
      sha256: z.string().nullable(),
      parseError: z.string().nullable().describe('Why runtimes would refuse the new version; null when it loads (or was removed)'),
      at: z.string(),
    })
    .describe('A file of a CNI conf dir was added, rewritten or removed; sent to every client (the versions are at GET /api/v1/node/cni/conf-versions?path=…)'),
);

export const tailErrorSchema = z.object({
  code: z.enum(['bad_request', 'replay_failed']),
  message: z.string().describe('A sentence naming what is wrong'),
  issues: z.array(issueSchema).optional(),
});

const CALL_EVENT_TYPES = ['call.started', 'call.finished', 'call.updated'] as const;
const CACHE_EVENT_TYPES = ['cache.added', 'cache.removed'] as const;

export const tailServerMessageSchema = component(
  'TailServerMessage',
  z
    .discriminatedUnion('type', [
      z.object({
        type: z.literal('hello'),
        protocol: z.number().int(),
        filter: tailFilterSchema,
        replay: z.object({ since: z.string(), limit: z.number().int() }).nullable().describe('What ?since= replays first; null: live only'),
      }),
      z
        .object({ type: z.enum(CALL_EVENT_TYPES), call: callSummarySchema })
        .describe(
          'call.started when a plugin starts, call.finished once when it ended; call.updated when a call already sent as finished changed afterwards (descendants that outlived the plugin wrote to its stdout/stderr, or ended, later): the whole call again, to replace the one shown; a client that never saw the call may show it as finished',
        ),
      z.object({ type: z.enum(CACHE_EVENT_TYPES), entry: tailCacheEntrySchema }),
      z.object({ type: z.literal('tracer.gap'), gap: tailGapSchema }),
      z.object({ type: z.literal('config.changed'), change: tailConfChangeSchema }),
      z
        .object({ type: z.literal('network.readiness'), readiness: networkReadinessSchema })
        .describe('A network became ready or not ready (CNI STATUS), or the error of its failure became known; sent to every client'),
      z
        .object({ type: z.literal('runtime.readiness'), runtime: runtimeStatusSchema })
        .describe("The container runtime's readiness changed (a condition such as NetworkReady, or whether it answers: GET /api/v1/node/runtime); sent to every client"),
      z.object({ type: z.literal('capture.changed'), capture: captureStatusSchema }).describe('The capture mode changed (auto turned payloads on or off, an operator set it), and why'),
      z
        .object({
          type: z.literal('replay.done'),
          calls: z.number().int(),
          capped: z.boolean(),
          message: z.string().optional(),
        })
        .describe('The replayed calls have all been sent: live calls follow'),
      z.object({ type: z.literal('filter.updated'), filter: tailFilterSchema }),
      z.object({ type: z.literal('pong') }),
      z.object({ type: z.literal('error'), error: tailErrorSchema }).describe('Sent before the daemon closes the socket (4400 for a bad query), or for a bad client message'),
    ])
    .describe('One JSON object per text frame, told apart by type'),
);

export const tailClientMessageSchema = component(
  'TailClientMessage',
  z
    .discriminatedUnion('type', [tailFilterSchema.extend({ type: z.literal('filter') }), z.strictObject({ type: z.literal('ping') })])
    .describe('filter: replace the filter (answered by filter.updated); ping: answered by pong'),
);

export type TailFilterFields = z.infer<typeof tailFilterSchema>;
export type TailCacheEntry = z.infer<typeof tailCacheEntrySchema>;
export type TailGap = z.infer<typeof tailGapSchema>;
export type TailConfChange = z.infer<typeof tailConfChangeSchema>;
export type TailError = z.infer<typeof tailErrorSchema>;
export type TailServerMessage = z.infer<typeof tailServerMessageSchema>;

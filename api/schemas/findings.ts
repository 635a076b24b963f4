/**
 * GET /api/v1/findings: what went wrong on the node, one item per kind and
 * subject, the worst first (severity, then most recently seen), paged with
 * a total and counts by kind. A new kind needs only its severity in the
 * store's table (store/findings/types.ts); everything here follows.
 */

import { z } from 'zod';
import { CACHE_FINDING_KINDS, FINDING_SEVERITIES, MAX_FINDINGS_PAGE } from '../../store/index.js';
import { nameParam, podParam } from './params.js';
import { component } from './registry.js';

export const FINDING_KINDS = CACHE_FINDING_KINDS;

const kindSchema = z.enum(FINDING_KINDS);
const severitySchema = z.enum(FINDING_SEVERITIES).describe('critical: the runtime is stuck on it (a DEL or ADD loop); warning: something will break or leaks; info: worth knowing, often expected');

/** "a,b" or a repeated parameter (kind=a&kind=b): either way a list, each checked against the known kinds. */
const kindListParam = z
  .union([z.string(), z.array(z.string())])
  .transform((v, ctx) => {
    const kinds = (Array.isArray(v) ? v : [v]).flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean);
    const unknown = kinds.filter((k) => !(FINDING_KINDS as readonly string[]).includes(k));
    if (unknown.length > 0) {
      ctx.issues.push({ code: 'custom', input: v, message: `Unknown kind ${unknown.map((k) => `"${k}"`).join(', ')}; known: ${FINDING_KINDS.join(', ')}` });
      return z.NEVER;
    }
    return kinds as (typeof FINDING_KINDS)[number][];
  })
  .describe(`One kind or several, comma-separated or repeated: ${FINDING_KINDS.join(', ')}`);

export const findingsQuerySchema = z.strictObject({
  kind: kindListParam.optional(),
  severity: severitySchema.optional().describe('Only findings of this severity'),
  pod: podParam('Only findings about this pod, as namespace/name').optional(),
  containerId: nameParam('Only findings about this container (CNI_CONTAINERID)').optional(),
  includeResolved: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional()
    .describe('Also findings whose condition has ended (default: open ones only)'),
  limit: z.coerce.number().int().min(1).max(MAX_FINDINGS_PAGE).default(100).describe(`Items per page, 1 to ${MAX_FINDINGS_PAGE}`),
  cursor: z.string().min(1).max(512).optional().describe('nextCursor of the previous page'),
});

export type FindingsQuery = z.output<typeof findingsQuerySchema>;

export const findingSchema = component(
  'Finding',
  z
    .object({
      id: z.number().int().describe('The latest occurrence'),
      kind: kindSchema,
      severity: severitySchema,
      subject: z.string().describe('What it is about (a file, a call, a container and interface, a pod): one open finding per kind and subject'),
      message: z.string().describe('What is wrong and what to do, for people'),
      pod: z.object({ namespace: z.string().nullable(), name: z.string() }).nullable().describe('The pod it is about, when known'),
      containerId: z.string().nullable(),
      network: z.string().nullable(),
      ip: z.string().nullable(),
      path: z.string().nullable().describe('The file it is about (a cache file, a host-local reservation)'),
      callId: z.string().nullable().describe('The call to look at (a loop: its latest failure)'),
      count: z.number().int().nullable().describe('How many times it happened, where that means something (a loop: its failures in the window); else null'),
      occurrences: z.number().int().describe('Times this condition was found anew (it ended and came back); 1 for most'),
      firstSeen: z.string().describe('When it was first found, over all occurrences (ISO 8601)'),
      lastSeen: z.string().describe('When it was last seen to hold (ISO 8601)'),
      resolvedAt: z.string().nullable().describe('When its latest occurrence ended; null while it holds'),
    })
    .describe('A finding: one kind and subject over time'),
);

export const findingPageSchema = component(
  'FindingPage',
  z.object({
    items: z.array(findingSchema).describe('Worst severity first, then most recently seen'),
    total: z.number().int().describe('Findings matching the query over all pages'),
    byKind: z
      .array(z.object({ kind: kindSchema, severity: severitySchema, count: z.number().int() }))
      .describe('Findings matching the query by kind, worst severity first, then most'),
    nextCursor: z.string().nullable().describe('Pass as ?cursor= for the next page; null on the last'),
  }),
);

export type Finding = z.infer<typeof findingSchema>;
export type FindingPage = z.infer<typeof findingPageSchema>;

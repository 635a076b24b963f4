/**
 * GET /api/v1/bundle's query (a bundle of the record for a window, pods or
 * calls) and GET /api/v1/source's answer (a live node, or a bundle opened
 * with `cnirec open`: from which node, taken when).
 */

import { z } from 'zod';
import { component } from './registry.js';
import { booleanParam, MAX_NAME_LENGTH, nameParam } from './params.js';
import { refineTimeWindow, timeParam } from './time-param.js';

/** Enough for any person's list; a longer one is a script's mistake. */
const MAX_LISTED = 100;

/** A parameter given once, repeated (arrives as an array) or comma-separated: a list either way. */
const listParam = (item: z.ZodType<string, string>, what: string) =>
  z
    .union([z.string(), z.array(z.string())])
    .transform((v) => (Array.isArray(v) ? v : [v]).flatMap((s) => s.split(',')).map((s) => s.trim()).filter((s) => s.length > 0))
    .pipe(z.array(item).max(MAX_LISTED))
    .describe(what);

const podItem = z
  .string()
  .max(2 * MAX_NAME_LENGTH + 1)
  .regex(/^[^/]+\/[^/]+$/, 'Must be namespace/name');

export const bundleQuerySchema = z
  .strictObject({
    since: timeParam('Calls started at or after (default: 6 hours ago)').optional(),
    until: timeParam('Calls started before (default: now)').optional(),
    pod: listParam(podItem, 'Only these pods (namespace/name; repeated or comma-separated): their calls in the window, with what they delegated').optional(),
    podUid: nameParam('With one pod: only the pod of this UID (a name reused)').optional(),
    call: listParam(z.string().min(1).max(128), 'These calls (ids; repeated or comma-separated): each one\'s whole tree, whatever the window').optional(),
    payloads: booleanParam('false: leave stdin, stdout and stderr out (default true)').optional(),
    maxBytes: z.coerce.number().int().min(64 * 1024).max(2 ** 40).optional().describe('The largest bundle in bytes: payloads are left out, oldest first, until it fits'),
  })
  .superRefine(refineTimeWindow)
  .superRefine((q, ctx) => {
    if (q.podUid !== undefined && (q.pod?.length ?? 0) !== 1) ctx.addIssue({ code: 'custom', path: ['podUid'], message: 'podUid narrows one pod: give exactly one pod' });
  });

export type BundleQuery = z.output<typeof bundleQuerySchema>;

export const sourceSchema = component(
  'Source',
  z.object({
    kind: z.enum(['node', 'bundle']).describe('node: a daemon recording this node; bundle: a bundle opened with `cnirec open` (nothing live: no tail, no capture switch)'),
    node: z.string().describe('The node the record is of'),
    cnirec: z.string().describe('The cnirec serving it'),
    bundle: z
      .object({
        file: z.string(),
        takenAt: z.string(),
        takenBy: z.string().describe('The cnirec that made it'),
        window: z.object({ since: z.string(), until: z.string() }),
        filters: z.object({ pods: z.array(z.object({ namespace: z.string(), name: z.string(), uid: z.string().nullable() })), calls: z.array(z.string()) }),
        payloads: z.object({ kept: z.enum(['all', 'partial', 'none']), leftOutBefore: z.string().nullable(), leftOut: z.number().int(), why: z.string().nullable() }),
        daemonAnswered: z.boolean().describe('false: the daemon was down; its health and settings are not in the bundle'),
        notes: z.array(z.string()),
      })
      .nullable()
      .describe('null on a live node'),
  }),
);

export type SourceBody = z.infer<typeof sourceSchema>;

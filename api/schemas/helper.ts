/**
 * A helper process (iptables, ip, tc…) a plugin ran: in full on a call's
 * page (with what it printed), as a summary in the pod's story.
 */

import { z } from 'zod';
import { payloadSchema } from './payload.js';
import { processRunFields, streamSizeSchema } from './process.js';
import { component } from './registry.js';

const helperFields = {
  seq: z.number().int().describe('Order within its call, from 0'),
  pid: z.number().int(),
  ppid: z.number().int(),
  path: z.string(),
  argv: z.array(z.string()),
  ...processRunFields,
};

export const helperSchema = component(
  'Helper',
  z.object({ ...helperFields, stdout: payloadSchema, stderr: payloadSchema }).describe('A helper process with what it printed'),
);

export const helperSummarySchema = component(
  'HelperSummary',
  z
    .object({ ...helperFields, payload: z.object({ stdout: streamSizeSchema, stderr: streamSizeSchema }) })
    .describe('A helper process, with the sizes of what it printed'),
);

export type Helper = z.infer<typeof helperSchema>;
export type HelperSummary = z.infer<typeof helperSummarySchema>;

/** What a call and a helper both say about their process: when it ran, how it ended, how much it printed. */

import { z } from 'zod';

/** When the process ran and how it ended; spread into CallSummary and the helper schemas. */
export const processRunFields = {
  startedAt: z.string().describe('ISO 8601'),
  endedAt: z.string().nullable(),
  durationMs: z.number().nullable(),
  exitCode: z.number().int().nullable(),
  signal: z.number().int().nullable(),
  coreDumped: z.boolean().nullable(),
};

/** A captured stream's size, without its bytes (lists, the pod story). */
export const streamSizeSchema = z.object({
  bytes: z.number().int().describe('Bytes stored'),
  totalBytes: z.number().int().describe('Bytes the process moved in all'),
  truncated: z.boolean(),
});

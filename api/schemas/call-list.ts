/** GET /api/v1/calls: a page of CallSummary, newest first, and the cursor to the next (older) page. */

import { z } from 'zod';
import { callSummarySchema } from './call-summary.js';
import { component } from './registry.js';

// Named once here so every list of summaries (pages, children, trees) refers to one component.
component('CallSummary', callSummarySchema);

export const callPageSchema = component(
  'CallPage',
  z.object({
    items: z.array(callSummarySchema).describe('Newest first'),
    nextCursor: z.string().nullable().describe('Pass as ?cursor= for the next, older page; null on the last page'),
  }),
);

export type CallPageBody = z.infer<typeof callPageSchema>;

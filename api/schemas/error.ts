/**
 * The one error body every route answers with, whatever went wrong:
 * `{ "error": { "code", "message", "issues"? } }`. Clients branch on `code`
 * (stable), show `message` (a sentence), and point at `issues[].path` (the
 * offending field) for bad input.
 */

import { z } from 'zod';
import { component } from './registry.js';

export const issueSchema = z.object({
  path: z.string().describe('The offending field ("limit", "mode"); "" for the input as a whole'),
  message: z.string().describe('What is wrong with it'),
});

export const errorBodySchema = component(
  'Error',
  z.object({
    error: z.object({
      code: z.string().describe('Stable machine-readable code: bad_request, unauthorized, not_found, not_implemented, internal_error…'),
      message: z.string().describe('A sentence for people'),
      issues: z.array(issueSchema).optional().describe('For bad_request: one entry per invalid field'),
    }),
  }),
);

export type ErrorBody = z.infer<typeof errorBodySchema>;
export type Issue = z.infer<typeof issueSchema>;

/** Response schemas for the error statuses a route can produce, to spread into its `response`. */
export function errorResponses<const S extends readonly number[]>(...statuses: S): { [K in S[number]]: typeof errorBodySchema } {
  return Object.fromEntries(statuses.map((s) => [s, errorBodySchema])) as { [K in S[number]]: typeof errorBodySchema };
}

/**
 * One MCP tool: its name, its words for the model (ours only: recorded text never goes into a
 * description or a summary), its zod input schema, and what it answers: a short summary and the data.
 * `toolResult` and `toolError` turn that into what MCP carries: the data as structured content and again
 * as JSON text (clients that read only text get it too), or an error result (isError) whose message says
 * what to do; the server goes on serving either way.
 */

import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { ClientOptions } from '../api-client.js';
import { ClientError, UsageError } from '../errors.js';

export interface Answer {
  /** A line or two in our own words: counts, states, ids cnirec made; never recorded text. */
  readonly summary: string;
  readonly data: Record<string, unknown>;
}

export interface Tool<S extends z.ZodObject = z.ZodObject> {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly input: S;
  /** The top level of `data`, for clients that read the output schema (loose: fields may be added). */
  readonly output: z.ZodObject;
  run(args: z.output<S>, client: ClientOptions): Promise<Answer>;
}

/** A tool's argument that the schema alone cannot refuse (two that contradict each other). */
export class ToolArgumentError extends Error {
  override readonly name = 'ToolArgumentError';
}

export function toolResult(answer: Answer): CallToolResult {
  return {
    content: [
      { type: 'text', text: answer.summary },
      { type: 'text', text: JSON.stringify(answer.data) },
    ],
    structuredContent: answer.data,
  };
}

export function toolError(tool: string, err: unknown): CallToolResult {
  return { content: [{ type: 'text', text: `${tool}: ${errorText(err)}` }], isError: true };
}

/** The daemon's refusal or absence as the CLI words it (already naming the field or the fix); a bug as its message. */
function errorText(err: unknown): string {
  if (err instanceof ClientError || err instanceof UsageError || err instanceof ToolArgumentError) return err.message;
  return `unexpected error: ${err instanceof Error ? err.message : String(err)}`;
}

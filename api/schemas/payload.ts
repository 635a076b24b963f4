/**
 * A captured stream as the API shows it: always the exact bytes (base64),
 * and the text too when those bytes are valid UTF-8, so a client never has
 * to guess whether `text` lost anything.
 */

import { z } from 'zod';
import { component } from './registry.js';

export const payloadSchema = component(
  'Payload',
  z.object({
    text: z.string().nullable().describe('The bytes as text; null when they are not valid UTF-8 (then read base64)'),
    base64: z.string().describe('The exact bytes captured'),
    bytes: z.number().int().describe('Bytes captured (the length of base64 decoded)'),
    totalBytes: z.number().int().describe('Bytes the process moved in all; more than bytes when truncated'),
    truncated: z.boolean().describe('Some bytes were not captured (above the capture cap, or lost by the tracer)'),
    redacted: z
      .boolean()
      .describe('Secret values inside this JSON were replaced by "[redacted]" before it was stored (see redactedPointers); the original bytes were not kept, so bytes and base64 are the redacted ones'),
    redactedPointers: z.array(z.string()).describe('JSON pointers (RFC 6901) of the values replaced (at most 100 listed); empty when not redacted'),
  }),
);

export type Payload = z.infer<typeof payloadSchema>;

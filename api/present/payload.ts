/**
 * Captured bytes → the API's payload object, and the JSON inside them when
 * there is some. The decoder is fatal so that `text` is either the bytes
 * exactly or absent, never a lossy guess with replacement characters.
 */

import type { CapturedStream } from '../../collector/index.js';
import type { Payload } from '../schemas/payload.js';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The bytes as a string when they are valid UTF-8, else null. */
export function utf8OrNull(bytes: Uint8Array): string | null {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}

export function presentPayload(stream: CapturedStream): Payload {
  return {
    text: utf8OrNull(stream.bytes),
    base64: Buffer.from(stream.bytes.buffer, stream.bytes.byteOffset, stream.bytes.byteLength).toString('base64'),
    bytes: stream.bytes.length,
    totalBytes: stream.totalBytes,
    truncated: stream.truncated,
    redacted: stream.redactions !== undefined,
    redactedPointers: stream.redactions ? [...stream.redactions] : [],
  };
}

/** The value a JSON text holds, or null when `text` is absent, empty or not JSON (a plugin's plain-text error, a cut payload). */
export function jsonOrNull(text: string | null): unknown {
  if (text === null || text.trim() === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

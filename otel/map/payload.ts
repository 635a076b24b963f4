/**
 * A stored stream (already redacted by the collector) → what goes into a
 * span event or log record, per `--otlp-payloads`: nothing, the first
 * CAPPED_PAYLOAD_BYTES, or all of it. Text when the bytes are UTF-8, else
 * base64 (OTLP strings must be UTF-8); cut on a character boundary; every
 * cut marked.
 */

import type { CapturedStream } from '../../collector/index.js';
import type { PayloadMode } from '../config/otlp-config.js';

/**
 * Per payload with `capped`: room for a whole typical CNI config or result
 * (0.3-2 KiB), while a batch of them stays far below the collector's request
 * limits and backends keep the value (Tempo's default attribute limit
 * truncates longer values; Loki and Elasticsearch take it whole).
 */
export const CAPPED_PAYLOAD_BYTES = 4096;

export interface PayloadView {
  /** The bytes as text, or base64 when they are not UTF-8. */
  readonly value: string;
  readonly encoding: 'utf-8' | 'base64';
  /** Bytes the process moved through the stream in all. */
  readonly totalBytes: number;
  /** Something is missing: cut at capture (the tracer's cap) or here (`capped`). */
  readonly truncated: boolean;
  /** Cut here, to CAPPED_PAYLOAD_BYTES. */
  readonly capped: boolean;
  /** JSON pointers of values the collector replaced with "[redacted]" before storing. */
  readonly redactedPointers: readonly string[];
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** null when payloads are off, or when nothing went through the stream. */
export function payloadView(stream: CapturedStream, mode: PayloadMode): PayloadView | null {
  if (mode === 'none' || (stream.bytes.length === 0 && stream.totalBytes === 0)) return null;
  const limit = mode === 'capped' ? CAPPED_PAYLOAD_BYTES : Infinity;
  const capped = stream.bytes.length > limit;
  const text = utf8(stream.bytes);
  let value: string;
  let encoding: PayloadView['encoding'];
  if (text !== null) {
    value = capped ? utf8(stream.bytes.subarray(0, charBoundary(stream.bytes, limit)))! : text;
    encoding = 'utf-8';
  } else {
    value = (capped ? stream.bytes.subarray(0, limit) : stream.bytes).toString('base64');
    encoding = 'base64';
  }
  return {
    value,
    encoding,
    totalBytes: stream.totalBytes,
    truncated: stream.truncated || capped,
    capped,
    redactedPointers: stream.redactions ?? [],
  };
}

function utf8(bytes: Uint8Array): string | null {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}

/** The largest cut at or below `limit` that does not split a UTF-8 sequence (continuation bytes are 10xxxxxx). */
export function charBoundary(bytes: Uint8Array, limit: number): number {
  let i = Math.min(limit, bytes.length);
  while (i > 0 && i < bytes.length && (bytes[i]! & 0xc0) === 0x80) i--;
  return i;
}

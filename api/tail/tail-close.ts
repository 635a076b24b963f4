/**
 * Close codes the tail uses, and the short reasons that go with them. A
 * close reason is limited to 123 bytes, so the full detail always travels
 * in an `error` message sent just before the close.
 */

import type { TailIssue } from './tail-messages.js';

export const CLOSE_CODES = {
  /** The daemon is shutting down. */
  goingAway: 1001,
  /** A frame above maxPayload: sent by ws itself. */
  messageTooBig: 1009,
  /** Reading the replay from the store failed. */
  internalError: 1011,
  /** The client did not read fast enough and its queue overflowed ("Try Again Later"). */
  tooSlow: 1013,
  /** The connect query was invalid (4000-4999 are for applications; 4400 echoes HTTP 400). */
  badQuery: 4400,
} as const;

const MAX_REASON_BYTES = 123;

/** `{"code":"bad_request","fields":[…]}`, dropping fields until it fits a close frame. */
export function badQueryReason(issues: readonly TailIssue[]): string {
  const fields = [...new Set(issues.map((i) => i.path || '(query)'))];
  for (let n = fields.length; n >= 0; n--) {
    const reason = JSON.stringify({ code: 'bad_request', fields: fields.slice(0, n).map((f) => f.slice(0, 60)) });
    if (Buffer.byteLength(reason) <= MAX_REASON_BYTES) return reason;
  }
  return '{"code":"bad_request"}';
}

export const tooSlowReason = (dropped: number): string => `too slow: ${dropped} messages dropped`;

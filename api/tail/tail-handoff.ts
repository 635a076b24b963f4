/**
 * Remembers what a replay sent so the live events held back meanwhile can be
 * flushed without repeating any. A call is in one of two states on the
 * wire: its start was sent, or its end was. A held-back start is stale once
 * either was sent (the replay may already have shown the call finished); a
 * held-back finish is stale only if the finish itself was sent. A held-back
 * update is never stale: the replay read the row at some moment, and the
 * update is the call as it is now (sent twice, it replaces a row with itself).
 */

import type { CallEventType } from './tail-messages.js';

export interface HandoffLedger {
  sent(id: string, type: CallEventType): void;
  alreadySent(id: string, type: CallEventType): boolean;
}

export function createHandoffLedger(): HandoffLedger {
  const sent = new Map<string, CallEventType>();
  return {
    sent(id, type) {
      if (sent.get(id) !== 'call.finished') sent.set(id, type === 'call.updated' ? 'call.finished' : type);
    },
    alreadySent(id, type) {
      const state = sent.get(id);
      if (state === undefined || type === 'call.updated') return false;
      return type === 'call.started' || state === 'call.finished';
    },
  };
}

// The handoff ledger decides which held-back live events a replay already
// covered.
import { describe, expect, it } from 'vitest';
import { createHandoffLedger } from '../../api/tail/tail-handoff.js';

describe('the handoff ledger', () => {
  it('lets every event through for a call the replay did not send', () => {
    const ledger = createHandoffLedger();
    expect(ledger.alreadySent('a', 'call.started')).toBe(false);
    expect(ledger.alreadySent('a', 'call.finished')).toBe(false);
  });

  it('skips the start but not the finish of a call replayed as running', () => {
    const ledger = createHandoffLedger();
    ledger.sent('a', 'call.started');
    expect(ledger.alreadySent('a', 'call.started')).toBe(true);
    expect(ledger.alreadySent('a', 'call.finished')).toBe(false);
  });

  it('skips both the start and the finish of a call replayed as finished', () => {
    const ledger = createHandoffLedger();
    ledger.sent('a', 'call.finished');
    expect(ledger.alreadySent('a', 'call.started')).toBe(true);
    expect(ledger.alreadySent('a', 'call.finished')).toBe(true);
  });

  it('does not forget a finish when told of a start afterwards', () => {
    const ledger = createHandoffLedger();
    ledger.sent('a', 'call.finished');
    ledger.sent('a', 'call.started');
    expect(ledger.alreadySent('a', 'call.finished')).toBe(true);
  });

  it('never holds back an update (the call as it is now), and counts one sent as a finish', () => {
    const ledger = createHandoffLedger();
    ledger.sent('a', 'call.finished');
    expect(ledger.alreadySent('a', 'call.updated')).toBe(false);
    ledger.sent('b', 'call.updated');
    expect(ledger.alreadySent('b', 'call.started')).toBe(true);
    expect(ledger.alreadySent('b', 'call.finished')).toBe(true);
    expect(ledger.alreadySent('b', 'call.updated')).toBe(false);
  });
});

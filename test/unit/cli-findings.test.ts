// `cnirec findings`: the node's findings as terminal lines (no colour: stdout is not a TTY here).
import { describe, expect, it } from 'vitest';
import { formatFindings, type FindingView } from '../../cli/findings-command.js';

const finding = (over: Partial<FindingView> = {}): FindingView => ({
  kind: 'del-loop',
  message: 'DEL of container c0ffee (eth0) for pod shop/cart-0 failed 4 times since 2026-11-21T18:00:00.000Z and has not succeeded since: …',
  path: null,
  callId: '0hodl3r7540-5a34',
  firstSeen: '2026-11-21T18:00:05.000Z',
  lastSeen: '2026-11-21T18:20:05.000Z',
  resolvedAt: null,
  ...over,
});

describe('cnirec findings', () => {
  it('prints each finding with its state, times, message and the call to look at', () => {
    const lines = formatFindings([finding(), finding({ kind: 'empty-file', message: 'cache file is empty', callId: null, resolvedAt: '2026-11-21T19:00:00.000Z' })], { includeResolved: true });
    expect(lines).toEqual([
      'del-loop  open  first 2026-11-21T18:00:05.000Z, last 2026-11-21T18:20:05.000Z',
      `  ${finding().message}`,
      '  cnirec show 0hodl3r7540-5a34',
      'empty-file  resolved 2026-11-21T19:00:00.000Z  first 2026-11-21T18:00:05.000Z, last 2026-11-21T18:20:05.000Z',
      '  cache file is empty',
    ]);
  });

  it('says when there is nothing to show, and how to see resolved findings', () => {
    expect(formatFindings([], { includeResolved: false })).toEqual(['no open findings (--all shows resolved ones too)']);
    expect(formatFindings([], { includeResolved: true })).toEqual(['no findings recorded']);
  });
});

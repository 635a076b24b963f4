// `cnirec findings`: the node's findings as terminal lines, worst first, with the counts that say how many there are.
import { describe, expect, it } from 'vitest';
import type { Finding } from '../../api/index.js';
import { findingsHeader, formatFinding } from '../../cli/findings-command.js';

const plain = (lines: string[]) => lines.map((s) => s.replace(/[\ue000-\ue00f]/g, ''));
const NOW_MS = Date.parse('2026-11-21T18:22:05.000Z');

const finding = (over: Partial<Finding> = {}): Finding => ({
  id: 7,
  kind: 'del-loop',
  severity: 'critical',
  subject: 'c0ffee/eth0',
  message: 'DEL of container c0ffee (eth0) for pod shop/cart-0 failed 4 times since 2026-11-21T18:00:00.000Z and has not succeeded since: …',
  pod: { namespace: 'shop', name: 'cart-0' },
  containerId: 'c0ffee',
  network: null,
  ip: null,
  path: null,
  callId: '0hodl3r7540-5a34',
  count: 4,
  occurrences: 1,
  firstSeen: '2026-11-21T18:00:05.000Z',
  lastSeen: '2026-11-21T18:20:05.000Z',
  resolvedAt: null,
  ...over,
});

describe('cnirec findings', () => {
  it('prints each finding with its severity, pod, count, state and times, its message and the call to look at', () => {
    expect(plain(formatFinding(finding(), { nowMs: NOW_MS }))).toEqual([
      'CRITICAL  del-loop  shop/cart-0  4×  open  last seen 2m ago, first 22m ago',
      `  ${finding().message}`,
      '  → cnirec show 0hodl3r7540-5a34',
    ]);
    const resolved = finding({ kind: 'empty-file', severity: 'warning', pod: null, count: null, callId: null, path: '/var/lib/cni/results/x', resolvedAt: '2026-11-21T18:21:05.000Z', occurrences: 3 });
    expect(plain(formatFinding(resolved, { nowMs: NOW_MS }))[0]).toBe('WARNING   empty-file  resolved 60s ago  last seen 2m ago, first 22m ago (found 3 times)');
    expect(plain(formatFinding(resolved, { nowMs: NOW_MS }))[2]).toBe('  → /var/lib/cni/results/x');
  });

  it('heads the list with how many there are in all, by severity and kind', () => {
    const page = {
      total: 2301,
      byKind: [
        { kind: 'del-loop', severity: 'critical', count: 1 },
        { kind: 'add-loop', severity: 'critical', count: 1 },
        { kind: 'leaked-ip', severity: 'warning', count: 8 },
        { kind: 'add-without-cache', severity: 'info', count: 2291 },
      ],
    } as const;
    expect(plain(findingsHeader({ ...page, byKind: [...page.byKind] }, { includeResolved: false }))).toEqual([
      '2,301 open findings: 2 critical (del-loop, add-loop), 8 warning (leaked-ip ×8), 2,291 info (add-without-cache ×2,291)',
    ]);
  });

  it('says when there is nothing to show, and how to see resolved findings', () => {
    expect(plain(findingsHeader({ total: 0, byKind: [] }, { includeResolved: false }))).toEqual(['no open findings (--resolved shows those that have ended)']);
    expect(plain(findingsHeader({ total: 0, byKind: [] }, { includeResolved: true }))).toEqual(['no findings']);
  });
});

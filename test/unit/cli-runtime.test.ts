/** The runtime's side on a terminal: doctor's section, the tail's line, a sandbox's line in `cnirec pod`, gc's plan. */

import { describe, expect, it } from 'vitest';
import type { RuntimeStatusBody } from '../../api/index.js';
import { formatRuntime, fromDaemon, networkNotReady } from '../../cli/doctor-runtime.js';
import { formatGc } from '../../cli/gc-format.js';
import { runtimeLine } from '../../cli/pod-command.js';
import { runtimeReadinessLine } from '../../cli/tail-command.js';

/** Without the CLI's style marks (coloured or not at print time): the text a person reads. */
const plain = (lines: string[]) => lines.map((s) => s.replace(/[\ue000-\ue00f]/g, ''));
const plainLine = (line: string) => plain([line])[0]!;

const status = (over: Partial<RuntimeStatusBody> = {}): RuntimeStatusBody => ({
  endpoint: '/run/containerd/containerd.sock',
  reachable: true,
  name: 'containerd',
  version: '1.6.20',
  apiVersion: 'v1',
  conditions: [
    { type: 'RuntimeReady', status: true, reason: '', message: '', since: '2026-01-01T00:00:00.000Z' },
    { type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady', message: 'cni plugin not initialized', since: '2026-01-01T00:00:05.000Z' },
  ],
  transitions: [],
  lastCheckedAt: '2026-01-01T00:01:00.000Z',
  answeringSince: '2026-01-01T00:00:00.000Z',
  error: null,
  errorKind: null,
  leaks: { judging: true, why: null, confirmed: 2, suspected: 0, lastJudgedAt: null },
  recorded: null,
  ...over,
});

describe('cnirec doctor’s runtime section', () => {
  it('shows each condition since when, says what NetworkReady=false means, and the leaks confirmed', () => {
    const r = fromDaemon(status(), true);
    expect(networkNotReady(r)).toBe(true);
    expect(plain(formatRuntime(r))).toEqual([
      'runtime (CRI)',
      '  containerd 1.6.20 at /run/containerd/containerd.sock (as the daemon asks it)',
      '  RuntimeReady  true  since 2026-01-01T00:00:00.000Z',
      '  NetworkReady  false since 2026-01-01T00:00:05.000Z  NetworkPluginNotReady: cni plugin not initialized',
      '  NetworkReady is false: the kubelet reports the node NotReady and no new pod gets a network',
      '  2 leaked attachments confirmed: cnirec gc lists them',
    ]);
  });

  it('says why a runtime cannot be asked, and that is no network problem', () => {
    const r = fromDaemon(status({ reachable: false, error: 'No CRI socket at /x.sock: no runtime listens there.', errorKind: 'absent' }), false);
    expect(networkNotReady(r)).toBe(false);
    expect(plain(formatRuntime(r))).toEqual(['runtime (CRI)', '  No CRI socket at /x.sock: no runtime listens there.']);
  });
});

describe('the tail’s runtime.readiness line', () => {
  it.each([
    ['not ready', status(), '── runtime containerd 1.6.20: RuntimeReady=true, NetworkReady=false (NetworkPluginNotReady: cni plugin not initialized) ──'],
    ['unreachable', status({ reachable: false, error: 'it hangs' }), '── runtime: cannot be asked (it hangs) ──'],
  ])('when %s', (_name, s, line) => expect(plainLine(runtimeReadinessLine(s))).toBe(line));
});

describe('a sandbox’s runtime line in cnirec pod', () => {
  const runtime = { state: 'ready' as const, createdAt: '2026-01-01T00:00:00.000Z', ip: '10.0.0.5', additionalIps: ['fd00::5'], uid: 'u', attempt: 1, runtimeHandler: '', labels: {}, annotations: {}, seenAt: '2026-01-01T00:02:00.000Z', goneAt: null };
  it('says its state, addresses and age', () => {
    expect(plainLine(runtimeLine(runtime))).toBe('  runtime: ready, 10.0.0.5, fd00::5, created 2026-01-01T00:00:00.000Z, attempt 1  (seen 2026-01-01T00:02:00.000Z)');
  });
  it('keeps the last known state of one the runtime no longer lists', () => {
    expect(plainLine(runtimeLine({ ...runtime, state: 'notready', goneAt: '2026-01-01T00:03:00.000Z' }))).toMatch(/^ {2}runtime: gone since 2026-01-01T00:03:00.000Z \(last known: notready\), /);
  });
});

describe('cnirec gc’s plan', () => {
  const item = {
    containerId: 'a'.repeat(64),
    network: 'podnet',
    ifName: 'eth0',
    addresses: ['10.0.0.9'],
    pod: { namespace: 'ns', name: 'web' },
    netns: '/var/run/netns/cni-1',
    cachePath: '/var/lib/cni/results/podnet-a-eth0',
    reservationPaths: ['/var/lib/cni/networks/podnet/10.0.0.9'],
    attachedAt: '2026-01-01T00:00:00.000Z',
    missingSince: '2026-01-01T00:05:00.000Z',
    freeable: true,
    why: null,
  };
  const base = { runtime: 'containerd 1.6.20 at /s', sandboxes: 3, applied: false, tooYoung: 0, notRuntime: 0, minAge: '1m', problems: [] };
  const NOW = Date.parse('2026-01-01T01:00:00.000Z');

  it('says a dry run frees nothing', () => {
    const out = plain(formatGc({ ...base, items: [item] }, NOW));
    expect(out[0]).toBe('cnirec gc: what a CNI GC would free on this node  (containerd 1.6.20 at /s: 3 sandboxes listed)');
    expect(out).toContain(`${'a'.repeat(12)}   podnet            eth0     10.0.0.9                    ns/web                        60m ago`);
    expect(out.at(-1)).toBe('1 leaked attachment, 1 of them freeable: dry run, nothing was freed (cnirec gc --apply runs their DELs, one at a time)');
  });

  it('says what each DEL did once applied', () => {
    const out = plain(formatGc({ ...base, applied: true, items: [{ ...item, outcome: { result: 'failed', plugin: 'bridge', error: 'cannot enter netns' } }] }, NOW));
    expect(out).toContain('  failed (bridge): cannot enter netns');
    expect(out.at(-1)).toBe('1 leaked attachment: 0 freed, 1 failed, 0 skipped, 0 not run');
  });

  it('says when there is nothing to free', () => {
    expect(plain(formatGc({ ...base, items: [], tooYoung: 1 }, NOW))).toContain('nothing to free: the runtime lists the sandbox of every attachment it made');
  });
});

// The web view's pure parts: how times, durations and payloads read, the waterfall's geometry, filters in
// URLs, and the live tail's capped list.
import { describe, expect, it } from 'vitest';
import type { CallSummary, CallTree, FindingPage, PodStory, TailServerMessage } from '../../api/index.js';
import { callView } from './cli-fixture.js';
import { groupFindings } from '../../ui/model/findings.js';
import { formatMs, localTime, outcomeOf, shortId, utcTitle } from '../../ui/model/format.js';
import { hexLines } from '../../ui/model/hex.js';
import { moveSelection } from '../../ui/model/list-keys.js';
import { decodeBase64, emptyPayloadNote, splitRedacted, viewPayload } from '../../ui/model/payload.js';
import { filterFromQuery, parsePodSearch, podPath, queryString, TAIL_FIELDS } from '../../ui/model/query.js';
import { applyTailMessages, EMPTY_TAIL, runningCount } from '../../ui/model/tail-list.js';
import { axisTicks, layoutWaterfall } from '../../ui/model/waterfall.js';
import { changesByNetns } from '../../ui/model/changes.js';

const T0 = Date.parse('2026-11-26T10:00:00.000Z');
const iso = (ms: number) => new Date(T0 + ms).toISOString();
const noStream = { bytes: 0, totalBytes: 0, truncated: false };

function summary(id: string, over: Partial<CallSummary> = {}): CallSummary {
  return callView({
    id,
    path: '/opt/cni/bin/bridge',
    ppid: 0,
    containerId: 'c'.repeat(64),
    netns: '/var/run/netns/x',
    pod: { namespace: 'demo', name: 'web-0', uid: null },
    startedAt: iso(0),
    endedAt: iso(10),
    durationMs: 10,
    payload: { stdin: noStream, stdout: noStream, stderr: noStream },
    ...over,
  });
}

const tree = (id: string, over: Partial<CallSummary> = {}, children: CallTree[] = [], helpers: CallTree['helpers'] = []): CallTree => ({ ...summary(id, over), children, helpers });

describe('times, durations, ids', () => {
  it('shows a time in the given zone, and UTC on hover', () => {
    expect(localTime('2026-11-26T10:00:05.042Z', 60)).toBe('2026-11-26 11:00:05.042');
    expect(localTime('2026-11-26T23:30:00.000Z', 90)).toBe('2026-11-27 01:00:00.000');
    expect(utcTitle('2026-11-26T10:00:05.042Z')).toBe('2026-11-26T10:00:05.042Z (UTC)');
    expect(localTime('not a time', 0)).toBe('not a time');
  });

  it.each([
    [null, '—'],
    [0.423, '0.42 ms'],
    [12.34, '12.3 ms'],
    [1234.5, '1,235 ms'],
  ])('%j ms reads %j', (ms, text) => {
    expect(formatMs(ms)).toBe(text);
  });

  it('cuts a container id to 12 characters', () => {
    expect(shortId('0123456789abcdef')).toBe('0123456789ab');
    expect(shortId(null)).toBe('—');
  });

  it.each([
    [{ exitCode: 0, signal: null, endedAt: iso(1), status: 'finished' as const }, 'exit 0', 'ok'],
    [{ exitCode: 1, signal: null, endedAt: iso(1), status: 'finished' as const }, 'exit 1', 'failed'],
    [{ exitCode: null, signal: 9, endedAt: iso(1), status: 'finished' as const }, 'signal 9', 'failed'],
    [{ exitCode: null, signal: null, endedAt: null, status: 'running' as const }, 'running', 'running'],
    [{ exitCode: null, signal: null, endedAt: null, status: 'incomplete' as const }, 'incomplete', 'incomplete'],
  ])('an end of %j reads %j', (run, text, tone) => {
    expect(outcomeOf(run)).toEqual({ text, tone });
  });
});

describe('payloads', () => {
  const b64 = (bytes: number[] | string) => Buffer.from(typeof bytes === 'string' ? bytes : Uint8Array.from(bytes)).toString('base64');

  it('pretty-prints JSON and keeps the exact text beside it', () => {
    const text = '{"cniVersion":"1.0.0","name":"demo"}';
    const view = viewPayload({ text, base64: b64(text), bytes: text.length });
    expect(view).toEqual({ kind: 'json', text, pretty: '{\n  "cniVersion": "1.0.0",\n  "name": "demo"\n}' });
  });

  it('shows text that is not JSON as it is, and bytes that are not UTF-8 in hex', () => {
    expect(viewPayload({ text: 'plain error', base64: b64('plain error'), bytes: 11 })).toEqual({ kind: 'text', text: 'plain error' });
    const view = viewPayload({ text: null, base64: b64([0xff, 0xfe, 0x41]), bytes: 3 });
    expect(view.kind).toBe('binary');
    expect(view.kind === 'binary' && [...view.bytes]).toEqual([0xff, 0xfe, 0x41]);
    expect(viewPayload({ text: '', base64: '', bytes: 0 })).toEqual({ kind: 'empty' });
  });

  it('says what an empty stream means: nothing went by, payloads were off (light), or bytes went by untaken', () => {
    expect(emptyPayloadNote({ truncated: false }, 'full')).toBe('(empty)');
    expect(emptyPayloadNote({ truncated: false }, 'light')).toBe('(not captured: light capture)');
    expect(emptyPayloadNote({ truncated: true }, 'full')).toBe('(none captured)');
  });

  it('decodes base64 to the exact bytes', () => {
    expect([...decodeBase64(b64([0, 1, 2, 250, 255]))]).toEqual([0, 1, 2, 250, 255]);
  });

  it('finds the redaction markers', () => {
    expect(splitRedacted('{"token":"[redacted]","a":1}')).toEqual(['{"token":', '"[redacted]"', ',"a":1}']);
  });

  it('dumps bytes as offset, hex and printable ASCII', () => {
    const lines = hexLines(Uint8Array.from([...Buffer.from('ABCDEFGHIJKLMNOP'), 0xff, 0x0a]));
    expect(lines).toEqual([
      { offset: '00000000', hex: '41 42 43 44 45 46 47 48  49 4a 4b 4c 4d 4e 4f 50', ascii: 'ABCDEFGHIJKLMNOP' },
      { offset: '00000010', hex: 'ff 0a', ascii: '..' },
    ]);
  });
});

describe('the waterfall', () => {
  const story = (calls: CallTree[]): PodStory => ({
    pod: { namespace: 'demo', name: 'web-0', uid: null, uids: [] },
    calls,
    sandboxes: [{ containerId: 'c'.repeat(64), podUid: null, startedAt: iso(0), calls, totals: {}, cache: [], findings: [], runtime: null }],
    totals: {},
    truncated: false,
  });

  it('nests delegated calls and helpers beneath their caller, in the order they started, on one axis', () => {
    const ipam = tree('ipam', { plugin: 'host-local', parentId: 'add', startedAt: iso(20), durationMs: 30, endedAt: iso(50) });
    const helper = { seq: 0, pid: 9, ppid: 1, path: '/usr/sbin/iptables', argv: ['iptables', '-L'], startedAt: iso(60), endedAt: iso(70), durationMs: 10, exitCode: 0, signal: null, coreDumped: false, payload: { stdout: noStream, stderr: noStream } };
    const add = tree('add', { startedAt: iso(0), durationMs: 100, endedAt: iso(100) }, [ipam], [helper]);
    const del = tree('del', { command: 'DEL', startedAt: iso(150), durationMs: 50, endedAt: iso(200), exitCode: 1, ok: false, error: 'boom' });
    const w = layoutWaterfall(story([add, del]), T0 + 1000);
    const rows = w.sandboxes[0]!.rows;
    expect(rows.map((r) => [r.key, r.depth, r.kind])).toEqual([
      ['add', 0, 'call'],
      ['ipam', 1, 'call'],
      ['add/h0', 1, 'helper'],
      ['del', 0, 'call'],
    ]);
    expect(w.endMs - w.startMs).toBe(200);
    expect(rows[0]).toMatchObject({ leftPct: 0, widthPct: 50, label: 'ADD bridge' });
    expect(rows[1]).toMatchObject({ leftPct: 10, widthPct: 15, label: 'ADD host-local', durationMs: 30 });
    expect(rows[3]).toMatchObject({ leftPct: 75, widthPct: 25, outcome: { tone: 'failed', text: 'exit 1' }, detail: 'boom' });
    expect(axisTicks(w, 4).map((t) => t.ms)).toEqual([0, 50, 100, 150, 200]);
  });

  it('draws a running call up to now, and a tiny one still visibly', () => {
    const running = tree('run', { startedAt: iso(0), durationMs: null, endedAt: null, exitCode: null, ok: null, status: 'running' });
    const tiny = tree('tiny', { startedAt: iso(500), durationMs: 0.01, endedAt: iso(500) });
    const rows = layoutWaterfall(story([running, tiny]), T0 + 1000).sandboxes[0]!.rows;
    expect(rows[0]).toMatchObject({ widthPct: 100, outcome: { tone: 'running' } });
    expect(rows[1]!.widthPct).toBeGreaterThan(0.3);
  });
});

describe('filters in the URL', () => {
  it('round-trips the tail filter, dropping empty and unknown fields', () => {
    const filter = filterFromQuery(TAIL_FIELDS, { namespace: 'demo', pod: ' ', failed: 'true', evil: 'x' });
    expect(filter).toEqual({ namespace: 'demo', failed: 'true' });
    expect(queryString(TAIL_FIELDS, filter)).toBe('?namespace=demo&failed=true');
    expect(queryString(TAIL_FIELDS, {})).toBe('');
  });

  it('reads a pod search as namespace/name or a UID', () => {
    expect(parsePodSearch('demo/web-0')).toEqual({ kind: 'name', namespace: 'demo', name: 'web-0' });
    expect(parsePodSearch(' 0f8fad5b-d9cb-469f-a165-70867728950e ')).toEqual({ kind: 'uid', uid: '0f8fad5b-d9cb-469f-a165-70867728950e' });
    expect(parsePodSearch('web-0')).toBeNull();
    expect(podPath('a b', '<x>', 'u1')).toBe('/ui/pods/a%20b/%3Cx%3E?podUid=u1');
  });
});

describe('the live tail list', () => {
  const started = (id: string): TailServerMessage => ({ type: 'call.started', call: summary(id, { status: 'running', endedAt: null, durationMs: null, exitCode: null, ok: null }) });
  const finished = (id: string): TailServerMessage => ({ type: 'call.finished', call: summary(id) });

  it('puts new calls first and replaces a started row when its call finishes', () => {
    let list = applyTailMessages(EMPTY_TAIL, [started('a'), started('b')]);
    expect(list.rows.map((r) => r.key)).toEqual(['b', 'a']);
    expect(runningCount(list)).toBe(2);
    list = applyTailMessages(list, [finished('a'), started('c'), finished('c')]);
    expect(list.rows.map((r) => r.key)).toEqual(['c', 'b', 'a']);
    expect(runningCount(list)).toBe(1);
    expect(list.received).toBe(3);
  });

  it('replaces a shown call in place on call.updated, and adds no row for an update of a call not shown', () => {
    const updated = (id: string): TailServerMessage => ({ type: 'call.updated', call: summary(id, { outputAfterExit: { stdout: null, stderr: 0 } }) });
    let list = applyTailMessages(EMPTY_TAIL, [finished('a'), started('b')]);
    list = applyTailMessages(list, [updated('a'), updated('old')]);
    expect(list.rows.map((r) => r.key)).toEqual(['b', 'a']);
    expect(list.rows[1]).toMatchObject({ kind: 'call', call: { id: 'a', outputAfterExit: { stderr: 0 } } });
    expect(list.received).toBe(2);
  });

  it('shows a tracer gap as a row, updated when it ends', () => {
    const gap = { startedAt: iso(0), endedAt: null, durationMs: null, reason: 'bpftrace exited', incompleteCalls: 1 };
    let list = applyTailMessages(EMPTY_TAIL, [{ type: 'tracer.gap', gap }]);
    list = applyTailMessages(list, [{ type: 'tracer.gap', gap: { ...gap, endedAt: iso(500), durationMs: 500 } }]);
    expect(list.rows).toHaveLength(1);
    expect(list.rows[0]).toMatchObject({ kind: 'gap', gap: { durationMs: 500 } });
  });

  it('keeps at most the cap, counting what fell off', () => {
    const messages = Array.from({ length: 250 }, (_, i) => finished(`c${i}`));
    const list = applyTailMessages(EMPTY_TAIL, messages, 100);
    expect(list.rows).toHaveLength(100);
    expect(list.rows[0]!.key).toBe('c249');
    expect(list.dropped).toBe(150);
    expect(list.received).toBe(250);
  });
});

describe('findings and lists', () => {
  it('groups findings by severity, worst first, then kind with the counts of all pages', () => {
    const finding = (id: number, kind: string, severity: 'critical' | 'warning' | 'info') =>
      ({ id, kind, severity, subject: `s${id}`, message: 'm', pod: null, containerId: null, network: null, ip: null, path: null, callId: null, count: null, occurrences: 1, firstSeen: iso(0), lastSeen: iso(0), resolvedAt: null }) as FindingPage['items'][number];
    const groups = groupFindings({
      items: [finding(1, 'del-loop', 'critical'), finding(2, 'leaked-ip', 'warning'), finding(3, 'leaked-ip', 'warning')],
      byKind: [
        { kind: 'del-loop', severity: 'critical', count: 1 },
        { kind: 'leaked-ip', severity: 'warning', count: 7 },
      ] as FindingPage['byKind'],
    });
    expect(groups.map((g) => [g.severity, g.count, g.kinds.map((k) => [k.kind, k.count, k.items.length])])).toEqual([
      ['critical', 1, [['del-loop', 1, 1]]],
      ['warning', 7, [['leaked-ip', 7, 2]]],
    ]);
  });

  it.each([
    ['j', -1, 0],
    ['j', 2, 3],
    ['ArrowDown', 4, 4],
    ['k', 3, 2],
    ['ArrowUp', 0, 0],
    ['End', 0, 4],
    ['x', 1, null],
  ])('%s from row %i goes to %j of 5', (key, from, to) => {
    expect(moveSelection(key, from, 5)).toBe(to);
  });
});

describe('a call\'s kernel changes in the web view', () => {
  const change = (netns: string, subject: string, ok: boolean | null = true) => ({ at: iso(0), pid: 1, netns, object: 'link' as const, action: 'add' as const, subject, ok, error: ok === false ? { errno: 'EINVAL', message: 'mtu greater than device maximum' } : null, attributes: {} });

  it('groups them by netns, the netns with a refusal first and its refusals at the top', () => {
    const groups = changesByNetns([change('/var/run/netns/p', 'eth0 up'), change('host', 'veth1 up'), change('host', 'br0 type bridge mtu 70000', false)]);
    expect(groups.map((g) => [g.netns, g.refused, g.changes.map((c) => c.subject)])).toEqual([
      ['host', 1, ['br0 type bridge mtu 70000', 'veth1 up']],
      ['/var/run/netns/p', 0, ['eth0 up']],
    ]);
  });

  it('puts the short count of a call on its pod story row, none for a call that changed nothing or a helper', () => {
    const story: PodStory = { pod: { namespace: 'demo', name: 'web-0', uid: null, uids: [] }, calls: [], sandboxes: [], totals: {}, truncated: false };
    const add = tree('add', { changeSummary: '+3 links, +2 addrs, +1 route, 4 rules; 1 refused' });
    const del = tree('del', { command: 'DEL', changeSummary: 'no changes', startedAt: iso(20) });
    const w = layoutWaterfall({ ...story, calls: [add, del], sandboxes: [{ containerId: 'c'.repeat(64), podUid: null, startedAt: iso(0), calls: [add, del], totals: {}, cache: [], findings: [], runtime: null }] }, T0 + 1000);
    expect(w.sandboxes[0]!.rows.map((r) => r.changes)).toEqual(['+3 links, +2 addrs, +1 route, 4 rules; 1 refused', null]);
  });
});

/**
 * The CLI as an engineer uses it at 3 a.m.: the built `cnirec` against the
 * API on a real port over a real store holding recorded-looking calls,
 * findings and cache entries. What it prints (on a terminal, through
 * `script`, and into pipes), and the exit code it ends with.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCallLoopDetector } from '../../store/findings/call-loops.js';
import { cacheEntry, delegatedIpam, makeCall, stream, T0, T0_MS } from './api-harness.js';
import { cnirec, escapeSequences, pipeline, serveApi, type ServedApi } from './cli-harness.js';

const SEC = 1_000_000;
/** What a hostile plugin writes to stderr: retitles the terminal, clears it, prints a fake red error. */
const HOSTILE_STDERR = '\u001b]0;pwned-title\u0007\u001b[2J\u001b[31mERROR-looking\u001b[0m\n';
const HOSTILE_POD = 'web\u001b[2J';

let api: ServedApi;
const hostile = makeCall({ at: 100 * SEC, podName: HOSTILE_POD, exit: 1, stdout: stream('{"code":7,"msg":"boom \\u001b[2J cleared"}'), stderr: stream(HOSTILE_STDERR), containerId: 'c0ffee0123456789aaaa' });
const other = makeCall({ at: 101 * SEC, podName: 'db-0', containerId: 'c0ffee9876543210bbbb' });
const stuck = (i: number) => makeCall({ at: (200 + i) * SEC, command: 'DEL', podName: 'stuck-del', containerId: 'deadbeef00112233', exit: 1, stdout: stream('{"code":11,"msg":"failed to delete veth: device or resource busy"}') });
const many = Array.from({ length: 60 }, (_, i) => makeCall({ at: (300 + i) * SEC, podName: `batch-${i}`, containerId: `batch${String(i).padStart(3, '0')}` }));
const parent = makeCall({ at: 400 * SEC, podName: 'tree-0', containerId: 'tree0container' });
const child = delegatedIpam(parent);

beforeAll(async () => {
  api = await serveApi({ cache: true });
  api.write(hostile, other, ...[0, 1, 2, 3, 4, 5].map(stuck), ...many, parent, child);
  // The loops as the daemon's detector finds them, an hour's window ending just after the last DEL.
  createCallLoopDetector(api.db).detect(T0_MS + 300_000);
  api.cache!.writeCacheEvents([
    { type: 'cache.reconciled', atMs: T0_MS - 500, dirs: ['/var/lib/cni/results'], livePaths: [], watchingResults: true },
    { type: 'cache.added', entry: cacheEntry('tree0container', { pod: { namespace: 'demo', name: 'tree-0', uid: null, infraContainerId: null } }), atMs: T0_MS + 400_100 },
    {
      type: 'ip.allocated',
      allocation: { path: '/var/lib/cni/networks/podnet/10.22.0.5', dir: '/var/lib/cni/networks', network: 'podnet', ip: '10.22.0.5', containerId: 'tree0container', ifName: 'eth0', mtimeMs: T0_MS + 400_000 },
      atMs: T0_MS + 400_000,
    },
  ]);
});

afterAll(async () => {
  await api?.close();
});

const run = (args: string[], opts: Parameters<typeof cnirec>[1] = {}) => cnirec(args, { api: api.url, ...opts });

describe('recorded text never drives the terminal', () => {
  it.each([
    ['calls', ['calls', '--all']],
    ['calls -o wide', ['calls', '-o', 'wide', '--failed']],
    ['show', ['show', hostile.id]],
    ['pod', ['pod', `demo/${HOSTILE_POD}`]],
    ['findings', ['findings', '--all']],
  ])('%s on a terminal with colours: only the CLI’s own colours, the recorded escapes shown as text', async (_name, args) => {
    const r = await run(args, { tty: true, env: { TERM: 'xterm-256color' } });
    expect(r.code).toBe(0);
    const { own, foreign } = escapeSequences(r.stdout);
    expect(foreign).toEqual([]);
    expect(own).toBeGreaterThan(0);
    expect(r.stdout).not.toContain('\u009b');
  });

  it('shows the hostile stderr visibly, on a terminal and in a pipe alike', async () => {
    for (const tty of [true, false]) {
      const r = await run(['show', hostile.id], { tty });
      expect(r.stdout).toContain('\\x1b]0;pwned-title\\x07\\x1b[2J\\x1b[31mERROR-looking\\x1b[0m');
      expect(r.stdout).toContain('error  boom \\x1b[2J cleared');
      expect(escapeSequences(r.stdout).foreign).toEqual([]);
    }
  });

  it('prints no colour at all into a pipe, or with NO_COLOR on a terminal', async () => {
    expect(escapeSequences((await run(['calls', '--failed'])).stdout).own).toBe(0);
    expect(escapeSequences((await run(['calls', '--failed'], { tty: true, env: { TERM: 'xterm-256color', NO_COLOR: '1' } })).stdout).own).toBe(0);
  });

  it('keeps --json and --raw byte-exact', async () => {
    const json = await run(['show', hostile.id, '--json']);
    expect(JSON.parse(json.stdout).stderr.text).toBe(HOSTILE_STDERR);
    const raw = await run(['show', hostile.id, '--raw', 'stderr']);
    expect(raw.stdout).toBe(HOSTILE_STDERR);
    const lines = (await run(['calls', '--failed', '--json'])).stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: string; pod: { name: string } });
    expect(lines.find((c) => c.id === hostile.id)?.pod.name).toBe(HOSTILE_POD);
  });
});

describe('exit codes and messages', () => {
  it.each([
    ['show without an id', ['show'], 2, 'which call?'],
    ['an unknown flag', ['calls', '--frobnicate'], 2, "Unknown option '--frobnicate'"],
    ['a limit that is no number', ['calls', '--limit', 'abc'], 2, '--limit takes a whole number from 1 to 1000, not "abc"'],
    ['a pod with a third part', ['calls', '--pod', 'prod/web-3/x'], 2, '--pod takes NAMESPACE/NAME (or NAME), not "prod/web-3/x"'],
    ['pod with no namespace', ['pod', 'web-3'], 2, 'the pod takes NAMESPACE/NAME, not "web-3"'],
    ['an unknown command', ['frobnicate'], 2, 'unknown command "frobnicate"'],
    ['an -o the CLI does not know', ['calls', '-o', 'yaml'], 2, '-o takes "wide" or "json", not "yaml"'],
    ['a call that is not recorded', ['show', 'nope'], 1, 'No call with id "nope" is recorded'],
    ['a time the daemon refuses', ['calls', '--since', 'bogus'], 1, 'Invalid query: since: Expected an ISO 8601 date-time'],
    ['epoch seconds where milliseconds belong', ['calls', '--since', '1795616000'], 1, '1795616000 looks like epoch seconds (2026-11-25T14:13:20.000Z); epoch values are milliseconds: 1795616000000'],
    ['a tail query the daemon refuses', ['tail', '--since', 'bogus'], 1, 'Invalid tail query: since: Expected an ISO 8601 date-time'],
  ])('%s: exit %s, one message', async (_what, args, code, message) => {
    const r = await run(args);
    expect(r.code).toBe(code);
    const said = r.stderr.split('\n').filter((l) => l.startsWith('cnirec: '));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(message);
    // The daemon's message, said once: not again in parentheses.
    expect(r.stderr.split(message).length - 1).toBe(1);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('exits 1 when no daemon answers, saying where it looked and what to do', async () => {
    // A port nothing listens on: taken, then given back.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const r = await cnirec(['calls'], { api: `http://127.0.0.1:${port}` });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`cnirec: no cnirec daemon answers at http://127.0.0.1:${port} (ECONNREFUSED): start it (sudo cnirec run) or pass --api URL\n`);
  });

  it('takes --api without a scheme as http://', async () => {
    const r = await cnirec(['calls', '--api', api.url.replace('http://', ''), '--limit', '1']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('COMMAND');
  });

  it('says a server that is not cnirec is not cnirec, and gives up on one that does not answer', async () => {
    const sockets = new Set<import('node:net').Socket>();
    const html: Server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hello</html>'));
    const silent: Server = createServer(() => undefined);
    for (const s of [html, silent]) s.on('connection', (c) => sockets.add(c));
    await Promise.all([html, silent].map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', r))));
    try {
      const port = (s: Server) => (s.address() as AddressInfo).port;
      const notCnirec = await cnirec(['calls'], { api: `http://127.0.0.1:${port(html)}` });
      expect(notCnirec.code).toBe(1);
      expect(notCnirec.stderr).toContain('answered HTTP 200 (text/html), not as a cnirec daemon does: is --api the daemon');
      const slow = await cnirec(['calls', '--timeout', '300ms'], { api: `http://127.0.0.1:${port(silent)}` });
      expect(slow.code).toBe(1);
      expect(slow.stderr).toContain('did not answer within 0.3s (--timeout)');
    } finally {
      for (const c of sockets) c.destroy();
      await Promise.all([html, silent].map((s) => new Promise((r) => s.close(r))));
    }
  });

  it('ends quietly when the reader goes away (| head), with nothing on stderr', async () => {
    const r = await pipeline('$CNIREC calls --all --json | head -1; $CNIREC calls --all | head -2', api.url);
    expect(r.stderr).toBe('');
    expect(r.statuses).toEqual([0, 0]);
    expect(r.stdout.trim().split('\n')).toHaveLength(3);
  });
});

describe('cnirec calls', () => {
  it('heads the list with a header row and says how to see more', async () => {
    const r = await run(['calls', '--limit', '5']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^AGE +COMMAND +PLUGIN +OUTCOME +DURATION +POD +ID +NOTES$/);
    expect(lines).toHaveLength(6);
    expect(r.stderr).toBe('showing the newest 5; more: --limit N (up to 1000) or --all\n');
  });

  it('--all pages through every call', async () => {
    const r = await run(['calls', '--all', '--json']);
    expect(r.stdout.trim().split('\n')).toHaveLength(2 + 6 + 60 + 2);
    expect(r.stderr).toBe('');
  });

  it("puts a failed call's error on its line", async () => {
    const r = await run(['calls', '--failed', '--pod', 'demo/stuck-del', '--limit', '1']);
    expect(r.stdout.trim().split('\n')[1]).toMatch(/DEL +bridge +exit 1 .*demo\/stuck-del .* error: failed to delete veth: device or resource busy$/);
  });

  it('finds calls by the 12-character container id it prints, and refuses an ambiguous prefix', async () => {
    const r = await run(['calls', '--container', 'c0ffee012345', '--json']);
    expect(r.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { id: string }).id)).toEqual([hostile.id]);
    const ambiguous = await run(['calls', '--container', 'c0ffee']);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toContain('containerId "c0ffee" starts several containers (c0ffee0123456789aaaa, c0ffee9876543210bbbb): give more of it');
  });

  it('reads a time copied from -o wide as the same instant, whatever the zones of CLI and daemon', async () => {
    const wide = await run(['calls', '-o', 'wide', '--pod', 'demo/db-0'], { env: { TZ: 'America/New_York' } });
    const started = /(\d{4}-\d\d-\d\dT[\d:.]+Z)/.exec(wide.stdout.split('\n')[1]!)![1]!;
    expect(started).toBe(new Date((T0 + 101 * SEC) / 1000).toISOString());
    for (const since of [started, started.slice(0, -1), started.replace('T', ' ').slice(0, -1)]) {
      const r = await run(['calls', '--since', since, '--pod', 'demo/db-0', '--json'], { env: { TZ: 'America/New_York' } });
      expect(r.stdout.trim().split('\n'), since).toHaveLength(1);
    }
  });

  it('takes a duration for --since', async () => {
    const r = await run(['calls', '--since', '1h', '--json']);
    expect(r.code).toBe(0);
    // Every call here is from 2025: none in the last hour.
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('');
  });
});

describe('cnirec pod', () => {
  it('counts failures in the totals instead of summing them into one slow DEL', async () => {
    const r = await run(['pod', 'demo/stuck-del']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/DEL 252\.0ms ×6 all failed$/);
    expect(r.stdout).toContain('finding del-loop (critical): DEL of container deadbeef00112233');
    expect(r.stdout).toContain('error: failed to delete veth: device or resource busy');
  });

  it('draws a delegated call under the call that ran it', async () => {
    const lines = (await run(['pod', 'demo/tree-0'])).stdout.split('\n');
    const i = lines.findIndex((l) => l.includes(parent.id));
    expect(lines[i + 1]).toContain(child.id);
    expect(lines[i + 1]).toMatch(/Z {6}ADD +host-local/);
  });
});

describe('cnirec findings', () => {
  it('puts the loop first, with how many there are, its pod and count in fields', async () => {
    const r = await run(['findings']);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^\d+ open findings: 1 critical \(del-loop\)/);
    expect(lines[1]).toMatch(/^CRITICAL {2}del-loop {2}demo\/stuck-del {2}6× {2}open/);
    const json = (await run(['findings', '--json', '--kind', 'del-loop,add-loop'])).stdout.trim().split('\n').map((l) => JSON.parse(l) as { kind: string; pod: unknown; count: number; severity: string });
    expect(json).toEqual([expect.objectContaining({ kind: 'del-loop', severity: 'critical', pod: { namespace: 'demo', name: 'stuck-del' }, count: 6 })]);
  });

  it('filters by pod and refuses an unknown kind by name', async () => {
    const byPod = await run(['findings', '--pod', 'demo/stuck-del', '--json']);
    expect(byPod.stdout.trim().split('\n')).toHaveLength(1);
    const bad = await run(['findings', '--kind', 'del-lop']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('Unknown kind "del-lop"');
  });
});

describe('cnirec ip and cnirec cache', () => {
  it('ip: who held an address, the pod named from the calls that reserved it', async () => {
    const r = await run(['ip', '10.22.0.5', '-o', 'wide']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe('ip 10.22.0.5');
    expect(lines[1]).toMatch(/^FROM +UNTIL +SOURCE +NETWORK +CONTAINER +IFNAME +POD +FILE$/);
    expect(lines.find((l) => l.includes('host-local'))).toMatch(/held +host-local +podnet +tree0container +eth0 +demo\/tree-0 /);
    const bad = await run(['ip', 'not-an-ip']);
    expect(bad.code).toBe(1);
  });

  it('cache: what libcni believes is attached, with the ADD that wrote it', async () => {
    const r = await run(['cache']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^WRITTEN +NETWORK +CONTAINER +IFNAME +POD +IPS +STATE +ADD CALL$/);
    expect(lines[1]).toMatch(/podnet +tree0contain +eth0 +demo\/tree-0 +10\.22\.0\.5 +live/);
  });
});

describe('cnirec tail', () => {
  it('replays since a time, then says where the live calls begin, delegated calls under their parent', async () => {
    // It follows forever: stopped by the timeout, what it printed until then is what counts.
    const r = await run(['tail', '--since', new Date((T0 + 399 * SEC) / 1000).toISOString(), '--pod', 'demo/tree-0'], { timeoutMs: 4000 });
    const lines = r.stdout.split('\n');
    const i = lines.findIndex((l) => l.includes(parent.id));
    expect(i).toBeGreaterThanOrEqual(0);
    expect(lines[i + 1]).toMatch(new RegExp(`└ ADD +host-local .*${child.id}$`));
    expect(r.stderr).toContain('── 2 recorded calls replayed; live from here ──');
  });
});

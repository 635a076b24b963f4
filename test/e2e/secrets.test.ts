/**
 * Secrets never reach what cnirec keeps or shows. A plugin runs with a
 * secret in its environment (as a runtime's own credentials would be) and
 * secrets in its network config, and runs a helper with one on its command
 * line; libcni's cache holds a config and result with secrets too. The real daemon with real bpftrace records all of it,
 * and none of the secret bytes may appear in the database file or its WAL,
 * the daemon's log (at debug level), any API answer, or the live tail; the
 * CNI_* variables are still stored. The API token is never logged either,
 * and the database is private to root (0600 in a 0700 directory).
 */

import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { StoredCall } from '../../store/index.js';
import { startDaemon, type RunningDaemon } from './support/daemon.js';
import { configBytes, createTestBridgeNetwork, withNetns, type TestBridgeNetwork } from './support/netns.js';
import { CNI_BIN_DIR, execPlugin, podCniArgs } from './support/plugin-driver.js';
import { requirePrivilegedSuite } from './support/privileged.js';

const canRun = requirePrivilegedSuite();
const ECHO = path.resolve(import.meta.dirname, 'fixtures/plugins/echo.sh');

const run = Date.now().toString(36);
const TOKEN = `api-t0ken-${run}-e2e`;
const SECRET = {
  env: `s3cr3t-env-${run}`,
  config: `s3cr3t-config-${run}`,
  ipam: `s3cr3t-ipam-${run}`,
  echo: `s3cr3t-echo-${run}`,
  cacheConfig: `s3cr3t-cache-config-${run}`,
  cacheResult: `s3cr3t-cache-result-${run}`,
  argv: `s3cr3t-argv-${run}`,
};
const ALL_SECRETS = [...Object.values(SECRET), TOKEN];

describe.runIf(canRun)('secrets with the real daemon and tracer', () => {
  let daemon: RunningDaemon;
  let net: TestBridgeNetwork;
  let scratch: string;
  const tail: string[] = [];
  let ws: WebSocket;
  const answers: string[] = [];

  const get = async (route: string): Promise<string> => {
    const res = await fetch(`${daemon.url}${route}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const body = await res.text();
    expect(res.status, body).toBe(200);
    answers.push(body);
    return body;
  };

  beforeAll(async () => {
    scratch = mkdtempSync(path.join(tmpdir(), 'cnirec-e2e-secrets-'));
    mkdirSync(path.join(scratch, 'results'), { mode: 0o700 });
    net = await createTestBridgeNetwork('cnirec-sec');
    daemon = await startDaemon({
      extraArgs: ['--log-level', 'debug', '--token', TOKEN, '--cni-cache-dirs', path.join(scratch, 'results'), '--host-local-dirs', net.dataDir, '--cache-rescan-ms', '500'],
    });
    ws = new WebSocket(`${daemon.url.replace('http', 'ws')}/api/v1/tail?namespace=sec-${run}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    ws.on('message', (data: Buffer) => tail.push(data.toString('utf8')));
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
  });
  afterAll(async () => {
    ws?.close();
    await net?.cleanup();
    await daemon?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('keeps no secret from the environment, the config, a helper\'s command line, the result or the cache, and still stores the CNI_* variables', async () => {
    const containerId = `sec${run}`;
    const cniArgs = podCniArgs(`sec-${run}`, 'vault-0', `uid-${run}`, containerId);
    // Plugins ignore fields they do not know; host-local gets the same config through bridge's delegation.
    const config = { ...net.config, password: SECRET.config, ipam: { ...(net.config.ipam as object), token: SECRET.ipam } };
    const extraEnv = { MY_API_TOKEN: SECRET.env };
    const ns = await withNetns('cnirec-sec');
    try {
      const base = { plugin: `${CNI_BIN_DIR}/bridge`, containerId, netns: ns.path, ifname: 'eth0', cniArgs, extraEnv };
      const add = await execPlugin({ ...base, command: 'ADD', stdin: configBytes(config) });
      expect(add.exitCode, add.stderr.toString()).toBe(0);
      // echo answers with its config through cat (a helper reading the plugin's stdin): the secret is on stdout too.
      const echoed = await execPlugin({ ...base, extraEnv: { ...extraEnv, ECHO_ARG_SECRET: SECRET.argv }, plugin: ECHO, cniPath: path.dirname(ECHO), command: 'ADD', ifname: 'eth1', stdin: configBytes({ cniVersion: '1.0.0', name: 'e', type: 'echo', apiKey: SECRET.echo }) });
      expect(echoed.stdout.toString()).toContain(SECRET.echo);
      const del = await execPlugin({ ...base, command: 'DEL', stdin: configBytes(config) });
      expect(del.exitCode).toBe(0);
    } finally {
      await ns.remove();
    }
    writeFileSync(
      path.join(scratch, 'results', `${net.name}-${containerId}-eth0`),
      JSON.stringify({
        kind: 'cniCacheV1',
        containerId,
        config: Buffer.from(JSON.stringify({ ...config, password: SECRET.cacheConfig })).toString('base64'),
        ifName: 'eth0',
        networkName: net.name,
        cniArgs: [['K8S_POD_NAMESPACE', `sec-${run}`], ['K8S_POD_NAME', 'vault-0']],
        result: { cniVersion: '1.0.0', ips: [{ address: '10.99.0.9/24' }], vendor: { secret: SECRET.cacheResult } },
      }),
    );

    const calls = await daemon.waitFor('the calls to be stored', () => {
      const all = daemon.callsFor(containerId);
      return all.filter((c) => c.status === 'finished').length >= 5 ? all : null;
    });
    const [addCall] = calls.filter((c: StoredCall) => c.command === 'ADD' && c.plugin === 'bridge');
    const ipamAdd = calls.find((c) => c.parentId === addCall!.id && c.plugin === 'host-local');
    const echoCall = calls.find((c) => c.plugin === 'echo.sh');
    expect(addCall!.env).toMatchObject({ CNI_COMMAND: 'ADD', CNI_CONTAINERID: containerId, CNI_IFNAME: 'eth0', CNI_ARGS: cniArgs });
    expect(Object.keys(addCall!.env).every((k) => k.startsWith('CNI_') || k === 'TRACEPARENT' || k === 'TRACESTATE')).toBe(true);
    expect([...addCall!.stdin.redactions!].sort()).toEqual(['/ipam/token', '/password']);
    expect([...ipamAdd!.stdin.redactions!].sort()).toEqual(['/ipam/token', '/password']);
    expect(echoCall!.stdin.redactions).toEqual(['/apiKey']);
    expect(echoCall!.stdout.redactions).toEqual(['/apiKey']);
    expect(echoCall!.helpers.map((h) => h.argv)).toContainEqual(['/bin/true', '--password', '[redacted]', 'Authorization: [redacted]']);
    expect(JSON.parse(addCall!.stdin.bytes.toString()).password).toBe('[redacted]');

    // Everything the API says about them.
    await get(`/api/v1/calls?containerId=${containerId}&includeVersion=true`);
    for (const c of calls) {
      await get(`/api/v1/calls/${c.id}`);
      await get(`/api/v1/calls/${c.id}/replay`);
    }
    expect(answers.find((a) => a.startsWith('#!/bin/sh') && a.includes(addCall!.id))).toMatch(/^# NOTE: stdin was redacted before it was stored/m);
    await get(`/api/v1/pods/sec-${run}/vault-0`);
    const end = Date.now() + 15_000;
    let cache = '';
    while (!cache.includes(containerId) && Date.now() < end) {
      cache = await get(`/api/v1/cache?containerId=${containerId}`);
      if (!cache.includes(containerId)) await new Promise((r) => setTimeout(r, 200));
    }
    const entry = (JSON.parse(cache) as { items: Array<{ redacted: boolean; redactedPointers: string[] }> }).items[0];
    expect(entry!.redacted).toBe(true);
    expect([...entry!.redactedPointers].sort()).toEqual(['/config/ipam/token', '/config/password', '/result/vendor/secret']);
    await get('/api/v1/findings?includeResolved=true');
    await get('/api/v1/ips/10.99.0.9');
    expect(tail.some((m) => m.includes('"call.finished"'))).toBe(true);

    // Refused requests are logged at debug level, with the token right and wrong.
    expect((await fetch(`${daemon.url}/api/v1/calls/no-such-call`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
    expect((await fetch(`${daemon.url}/api/v1/calls`, { headers: { authorization: `Bearer not-${TOKEN}` } })).status).toBe(401);

    const db = daemon.dbPath;
    const files = ['', '-wal'].map((s) => db + s).filter((f) => existsSync(f));
    expect(files.length).toBeGreaterThan(0);
    const stored = Buffer.concat(files.map((f) => readFileSync(f)));
    // The line comes through the daemon's stdout pipe, which may be read here after the answer came.
    for (let i = 0; i < 50 && !/"level":20,.*"msg":"request refused"/.test(daemon.logs()); i++) await new Promise((r) => setTimeout(r, 100));
    const log = daemon.logs();
    expect(log).toMatch(/"level":20,.*"msg":"request refused"/);
    for (const s of ALL_SECRETS) {
      expect(stored.includes(s), `${s} in the database files`).toBe(false);
      expect(log.includes(s), `${s} in the daemon's log`).toBe(false);
      expect(answers.some((a) => a.includes(s)), `${s} in an API answer`).toBe(false);
      expect(tail.some((m) => m.includes(s)), `${s} in the live tail`).toBe(false);
    }
    // What is kept still says who called what.
    expect(stored.includes(`CNI_CONTAINERID`)).toBe(true);
    expect(stored.includes(containerId)).toBe(true);
  });

  it('creates the database 0600 in a 0700 directory', () => {
    expect(statSync(daemon.dbPath).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(daemon.dbPath)).mode & 0o777).toBe(0o700);
    if (existsSync(`${daemon.dbPath}-wal`)) expect(statSync(`${daemon.dbPath}-wal`).mode & 0o077).toBe(0);
  });
});

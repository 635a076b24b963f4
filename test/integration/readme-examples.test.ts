/**
 * The README's examples, run as printed: every `node bin/cnirec.js …` and
 * `curl …` line of its shell blocks against a served API over recorded
 * calls (placeholders such as `<call id>` filled in, the address swapped
 * for the test's), each expected to succeed; and its metrics table, name
 * for name, against what /metrics serves.
 */

import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../api/app.js';
import type { NodeCniDeps } from '../../api/deps.js';
import { createRetentionWiring } from '../../daemon/retention-wiring.js';
import { createCallStore, createFindingsReader, openDatabase, writeTimingFor } from '../../store/index.js';
import { makeCall, stream, TRACER_STATUS } from './api-harness.js';
import { CLI, serveApi, type ServedApi } from './cli-harness.js';
import { COLLECTOR_STATS, STORE_STATUS } from './harness.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** Lines of the README's ```sh blocks that run the CLI or curl, without their trailing comments. */
function exampleCommands(): string[] {
  const blocks = [...README.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks
    .flatMap((b) => b.split('\n'))
    .map((l) => l.replace(/\s+#\s.*$/, '').trim())
    .filter((l) => l.startsWith('node bin/cnirec.js ') || l.startsWith('curl '));
}

let api: ServedApi;
const failed = makeCall({ at: 1_000_000, podName: 'web-0', exit: 1, stdout: stream('{"code":11,"msg":"no IP addresses available"}') });

beforeAll(async () => {
  api = await serveApi({ cache: true });
  api.write(failed, makeCall({ at: 2_000_000, podName: 'web-0', startedAtUs: Date.now() * 1000 - 60_000_000 }));
});
afterAll(async () => api?.close());

function fill(command: string): string {
  return command
    .replaceAll('node bin/cnirec.js', `${process.execPath} ${CLI}`)
    .replaceAll('http://127.0.0.1:7070', api.url)
    .replaceAll('127.0.0.1:7070', api.url.replace('http://', ''))
    .replaceAll('<call id>', failed.id)
    .replaceAll('<container id>', failed.containerId!.slice(0, 12))
    .replaceAll('<namespace>/<name>', 'demo/web-0');
}

function sh(command: string, cwd: string, timeoutMs: number): Promise<{ code: number | null; killed: boolean; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['--noprofile', '--norc', '-c', command], { cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, CNIREC_API: api.url }, timeout: timeoutMs, encoding: 'utf8' }, (err, _stdout, stderr) => {
      const e = err as (Error & { code?: number; killed?: boolean }) | null;
      resolve({ code: e === null ? 0 : typeof e.code === 'number' ? e.code : null, killed: e?.killed === true, stderr });
    });
  });
}

describe("the README's examples", () => {
  const commands = exampleCommands();

  it('are there to run', () => {
    expect(commands.length).toBeGreaterThan(10);
  });

  it.each(commands.filter((c) => !/ (run|demo)\b/.test(c.split('#')[0]!)))('%s', async (command) => {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'cnirec-readme-'));
    try {
      const follows = / tail\b/.test(command);
      const startedMs = Date.now();
      // Long enough for node to start and install its SIGTERM handler on a loaded machine.
      const r = await sh(fill(command), cwd, follows ? 6000 : 20_000);
      if (follows) expect(Date.now() - startedMs).toBeGreaterThanOrEqual(5900);
      // `tail` follows until stopped (SIGTERM here, as by the timeout): it ends cleanly then, and not before.
      if (follows) expect({ code: r.code, errors: r.stderr.split('\n').filter((l) => l.startsWith('cnirec:')) }).toEqual({ code: 0, errors: [] });
      else expect({ code: r.code, stderr: r.stderr.split('\n').filter((l) => l.startsWith('cnirec:')) }).toEqual({ code: 0, stderr: [] });
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  });
});

describe("the README's metrics table", () => {
  it('names exactly the cnirec_* metrics /metrics serves', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cnirec-readme-metrics-'));
    const db = openDatabase(path.join(dir, 'm.db'));
    const store = createCallStore(db);
    const retention = createRetentionWiring(db, { retentionMaxAge: 86_400_000, retentionMaxDbSize: 4 << 20 }, pino({ level: 'silent' }));
    const app = await buildApp({
      tracerStatus: () => TRACER_STATUS,
      collectorStats: () => COLLECTOR_STATS,
      storeStatus: () => STORE_STATUS,
      store,
      subscribe: () => () => undefined,
      readiness: { networks: () => [], subscribe: () => () => undefined },
      findings: createFindingsReader(db),
      runtime: {
        view: () => ({ endpoint: null, reachable: false, version: null, conditions: [], transitions: [], lastCheckedAtMs: null, problem: null, answeringSinceMs: null, leaks: { judging: false, why: null, confirmed: 0, suspected: 0, lastJudgedAtMs: null } }),
        subscribe: () => () => undefined,
        sandboxes: () => new Map(),
        sandboxesOfPod: () => [],
        gcPlan: () => ({ endpoint: null, reachable: false, judging: false, why: null, items: [], suspected: 0, judgedAtMs: null }),
        leakedByNetwork: () => new Map(),
      },
      retentionStatus: () => retention.status(),
      writeTiming: writeTimingFor(db),
      cache: {
        status: () => ({ running: true, resultDirs: [], ipamDirs: [], watchedDirs: 1, entries: 1, allocations: 1, problems: 0, lastError: null, openFindings: {}, lastRescanAt: new Date().toISOString(), pendingWrites: 0, droppedWrites: 0 }),
      },
      // Only its status is read by /metrics.
      nodeCni: {
        status: () => ({ confDirs: [], watchedFiles: 1, changes: { added: 0, changed: 0, removed: 0 }, problems: { error: 0, warning: 0 }, lastReportAtMs: null, binariesHashed: 0, binaryQueueDropped: 0 }),
      } as unknown as NodeCniDeps,
      otelStatus: () => ({
        state: 'idle',
        payloads: 'capped',
        traces: null,
        logs: null,
        backlog: 0,
        skipped: { backlogFull: 0, tooOld: 0, pruned: 0, rejected: 0 },
        failingSince: null,
        lastExportAt: null,
        lagMs: { last: null, max: null },
      }),
    });
    try {
      const served = new Set([...(await app.inject({ method: 'GET', url: '/metrics' })).body.matchAll(/^# HELP (cnirec_\w+)/gm)].map((m) => m[1]!));
      const table = README.split('### Metrics')[1]!.split('\n## ')[0]!;
      const documented = new Set([...table.matchAll(/`(cnirec_\w+)/g)].map((m) => m[1]!));
      expect([...documented].sort()).toEqual([...served].sort());
    } finally {
      await app.close();
      await retention.stop();
      store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * Makes a bundle: one .tar.gz with the record for a window or for pods and
 * calls (a consistent snapshot of the database, store/bundle/), the node's
 * CNI setup as it is now (bundle-node-state.ts), the container runtime as the
 * daemon saw it or, with the daemon down, as asked here (bundle-runtime.ts),
 * what the daemon adds when it runs (health, settings, tracer, metrics, its
 * last log lines), a
 * manifest.json and a README.txt. The same function serves `cnirec bundle`
 * with no daemon (the database read alone) and the daemon's
 * GET /api/v1/bundle. `maxBytes` bounds the file: payloads go, oldest
 * first, until it fits, and the manifest says so.
 */

import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { writeTarGz, isoFromMs, type TarSource } from '../lib/index.js';
import type { RuntimeAnswer } from '../collector/index.js';
import type { DaemonReadings } from '../api/index.js';
import { ALL_PAYLOADS, NO_PAYLOADS, payloadCutFor, samplePayloads, snapshotRecord, type PayloadChoice, type PodSelector, type SnapshotSummary } from '../store/index.js';
import { BUNDLE_FORMAT, BUNDLE_FORMAT_VERSION, MANIFEST_FILE, README_FILE, RECORD_FILE, readmeText, type BundleManifest, type BundlePayloads } from './bundle-manifest.js';
import { stageNodeState, type NodeSetupInputs } from './bundle-node-state.js';
import { ASKED_RUNTIME_FILE, askedRuntimeFile, askedRuntimeNotes, DAEMON_GC_PLAN_FILE, DAEMON_RUNTIME_FILE, daemonRuntimeOf, type RuntimeAtBundle } from './bundle-runtime.js';
import { createStage, type Stage } from './bundle-stage.js';
import { buildInfo } from './build-info.js';

export const DEFAULT_BUNDLE_WINDOW_MS = 6 * 3_600_000;
/** Tries at fitting --max-size by leaving out more payloads; each leaves out half as much again as the last. */
const MAX_FIT_ATTEMPTS = 10;
/** Payload bytes compressed to learn their ratio. */
const SAMPLE_BYTES = 1024 * 1024;

export interface BundleRequest {
  readonly sinceMs: number;
  readonly untilMs: number;
  readonly pods: readonly PodSelector[];
  readonly calls: readonly string[];
  /** false: payloads left out (--no-payloads). */
  readonly payloads: boolean;
  /** The bundle's largest size in bytes; null: no bound. */
  readonly maxBytes: number | null;
}

/** What a running daemon adds; null when none answered. */
export interface DaemonState extends DaemonReadings {
  readonly settings: Readonly<Record<string, unknown>>;
  /** Its last log lines (pino JSON), oldest first. */
  readonly log: readonly string[];
}

export interface BundleSetup extends NodeSetupInputs {
  /** The database to read (read-only). */
  readonly db: string;
  /** The node's name in the manifest. */
  readonly node: string;
  readonly tmpDir?: string;
  /** When no daemon answers: its last log lines from elsewhere (a log file, the journal), and where they came from. */
  readonly fallbackLog?: () => Promise<{ lines: readonly string[]; source: string } | null>;
  /** When no daemon answers: the container runtime asked directly (the collector's CRI client, a short deadline). */
  readonly askRuntime?: () => Promise<RuntimeAnswer>;
  /** A bundle cut from an opened bundle: its node and daemon files are carried over, never read from this machine. */
  readonly carry?: { readonly dir: string; readonly manifest: BundleManifest };
}

export interface MadeBundle {
  readonly file: string;
  readonly manifest: BundleManifest;
  /** Removes the bundle's working directory (and `file`, unless moved away before). */
  cleanup(): Promise<void>;
}

/** A refusal a person can act on: one sentence, no stack trace. */
export class BundleError extends Error {
  override readonly name = 'BundleError';
  constructor(
    message: string,
    /** not-found: a call asked for is not recorded; too-big: over maxBytes even without payloads; refused: anything else about the file or request. */
    readonly kind: 'not-found' | 'too-big' | 'refused' = 'refused',
  ) {
    super(message);
  }
}

/** A BundleError as the API answers it (404 a call not recorded, 413 too big, 400 the rest); anything else is thrown on. */
export function refusalOf(err: unknown): { ok: false; status: 400 | 404 | 413; message: string } {
  if (!(err instanceof BundleError)) throw err;
  return { ok: false, status: err.kind === 'not-found' ? 404 : err.kind === 'too-big' ? 413 : 400, message: err.message };
}

export async function makeBundle(request: BundleRequest, setup: BundleSetup, daemon: DaemonState | null, nowMs = Date.now()): Promise<MadeBundle> {
  const work = await mkdtemp(path.join(setup.tmpDir ?? os.tmpdir(), 'cnirec-bundle-'));
  try {
    const made = await make(work, request, setup, daemon, nowMs);
    return { ...made, cleanup: () => rm(work, { recursive: true, force: true }) };
  } catch (err) {
    await rm(work, { recursive: true, force: true });
    throw err;
  }
}

async function make(work: string, request: BundleRequest, setup: BundleSetup, daemon: DaemonState | null, nowMs: number): Promise<Omit<MadeBundle, 'cleanup'>> {
  const selection = { sinceMs: request.sinceMs, untilMs: request.untilMs, pods: request.pods, calls: request.calls };
  const full = path.join(work, 'snapshot.db');
  const first = await snapshotRecord({ source: setup.db, target: full, selection, payloads: request.payloads ? ALL_PAYLOADS : NO_PAYLOADS });
  if (first.missingCalls.length > 0) {
    throw new BundleError(`No call ${first.missingCalls.join(', ')} is recorded on this node (a call id from \`cnirec calls\`; retention may have deleted it).`, 'not-found');
  }
  const stage = createStage(path.join(work, 'stage'));
  const notes = setup.carry ? await carryOver(stage, setup.carry) : await stageNow(stage, setup, daemon, nowMs);

  const base: Omit<BundleManifest, 'schemaVersion' | 'rows' | 'files' | 'payloads'> = {
    format: BUNDLE_FORMAT,
    formatVersion: BUNDLE_FORMAT_VERSION,
    node: setup.node,
    takenAt: isoFromMs(nowMs),
    cnirec: buildInfo().version,
    window: { since: isoFromMs(first.window.sinceMs), until: isoFromMs(first.window.untilMs), asked: { since: isoFromMs(request.sinceMs), until: isoFromMs(request.untilMs) } },
    filters: { pods: request.pods.map((p) => ({ namespace: p.namespace, name: p.name, uid: p.uid })), calls: [...request.calls] },
    maxBytes: request.maxBytes,
    daemon: setup.carry
      ? setup.carry.manifest.daemon
      : { answered: daemon !== null, note: daemon === null ? 'No daemon answered: the record was read from its database alone; daemon/ holds what could be found of its log.' : null },
    notes,
  };

  // The record as asked, then with the oldest payloads left out until the file fits (when bounded).
  let keep: PayloadChoice = request.payloads ? ALL_PAYLOADS : NO_PAYLOADS;
  let summary: SnapshotSummary = first;
  let record = full;
  let dropBytes = 0;
  for (let attempt = 0; ; attempt++) {
    // The full snapshot stays where it is while later attempts may be cut from it.
    const manifest = await finish(stage, record, request.maxBytes !== null && record === full, summary, base, payloadsOf(request, keep, summary));
    const file = path.join(work, `bundle-${attempt}.tar.gz`);
    await pack(stage, manifest, file);
    const size = (await stat(file)).size;
    if (request.maxBytes === null || size <= request.maxBytes) return { file, manifest };
    if (keep.keepFromUs === null || attempt >= MAX_FIT_ATTEMPTS) {
      throw new BundleError(
        `The bundle is ${mib(size)} ${keep.keepFromUs === null ? 'without any payload' : 'with most payloads left out'}, over --max-size ${mib(request.maxBytes)}: narrow it (--since, --pod, --call) or raise --max-size.`,
        'too-big',
      );
    }
    await rm(file);
    // Compressed bytes to lose, as payload bytes before compression (at the ratio a sample of them compresses to),
    // a tenth more for the archive's own overhead; half as much again each try that falls short.
    const sample = await samplePayloads(full, SAMPLE_BYTES);
    const ratio = sample.length === 0 ? 1 : Math.max(0.01, gzipSync(sample).length / sample.length);
    dropBytes = Math.max(dropBytes * 1.5, ((size - request.maxBytes) / ratio) * 1.1);
    keep = { keepFromUs: await payloadCutFor(full, dropBytes) };
    record = path.join(work, `snapshot-${attempt}.db`);
    // From the full snapshot, every row of it, the payloads cut; the window stays the one it was taken for.
    summary = { ...(await snapshotRecord({ source: full, target: record, selection: null, payloads: keep })), window: first.window };
  }
}

function payloadsOf(request: BundleRequest, keep: PayloadChoice, summary: SnapshotSummary): BundlePayloads {
  if (!request.payloads) return { kept: 'none', leftOutBefore: null, leftOut: summary.payloadsLeftOut, why: '--no-payloads' };
  if (keep.keepFromUs === 0) return { kept: 'all', leftOutBefore: null, leftOut: 0, why: null };
  const why = `left out, oldest first, for the bundle to fit --max-size ${mib(request.maxBytes ?? 0)}`;
  if (keep.keepFromUs === null) return { kept: 'none', leftOutBefore: null, leftOut: summary.payloadsLeftOut, why };
  return { kept: 'partial', leftOutBefore: isoFromMs(Math.floor(keep.keepFromUs / 1000)), leftOut: summary.payloadsLeftOut, why };
}

/** Puts the record and the README in the stage, and the manifest that lists them. */
async function finish(
  stage: Stage,
  record: string,
  copy: boolean,
  summary: SnapshotSummary,
  base: Omit<BundleManifest, 'schemaVersion' | 'rows' | 'files' | 'payloads'>,
  payloads: BundlePayloads,
): Promise<BundleManifest> {
  const what = "the record: a SQLite database of cnirec's schema (open it with `cnirec open`)";
  if (copy) await stage.copyIn(RECORD_FILE, record, what);
  else await stage.adopt(RECORD_FILE, record, what);
  await stage.add(README_FILE, readmeText({ ...base, payloads }), 'what is inside and how to open it');
  return { ...base, schemaVersion: summary.schemaVersion, rows: { ...summary.rows }, payloads, files: await stage.files() };
}

/** manifest.json first (a reader knows at once whether it holds a bundle), then the README, then the rest. */
async function pack(stage: Stage, manifest: BundleManifest, file: string): Promise<void> {
  const mtimeMs = Date.parse(manifest.takenAt);
  const manifestBytes = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
  const order = [README_FILE, ...manifest.files.map((f) => f.path).filter((p) => p !== README_FILE)];
  const sources: TarSource[] = [
    { name: MANIFEST_FILE, bytes: manifestBytes, size: manifestBytes.length, mtimeMs },
    ...order.map((name) => ({ name, file: stage.pathOf(name), size: manifest.files.find((f) => f.path === name)!.bytes, mtimeMs })),
  ];
  await writeTarGz(file, sources);
}

/** The node's and the daemon's files of the bundle this one is cut from, as they were. */
async function carryOver(stage: Stage, carry: NonNullable<BundleSetup['carry']>): Promise<string[]> {
  for (const f of carry.manifest.files) {
    if (f.path === RECORD_FILE || f.path === README_FILE) continue;
    await stage.copyIn(f.path, path.join(carry.dir, ...f.path.split('/')), f.what);
  }
  return [...carry.manifest.notes, `Cut from a bundle of node ${carry.manifest.node} taken at ${carry.manifest.takenAt}: node/ and daemon/ are that bundle's.`];
}

/** The node's setup, the runtime and the daemon's state as they are now. */
async function stageNow(stage: Stage, setup: BundleSetup, daemon: DaemonState | null, nowMs: number): Promise<string[]> {
  const runtime = await runtimeNow(stage, setup, daemon);
  return [...runtime.notes, ...(await stageNodeState(stage, setup, setup.db, nowMs, runtime.said)), ...(await stageDaemon(stage, daemon, setup))];
}

/** What the daemon saw of the runtime, else the runtime asked here (node/runtime.json), else nothing. */
async function runtimeNow(stage: Stage, setup: BundleSetup, daemon: DaemonState | null): Promise<{ said: RuntimeAtBundle | null; notes: string[] }> {
  if (daemon !== null) {
    const view = daemonRuntimeOf(daemon.runtime);
    return { said: view ? { from: 'daemon', view } : null, notes: [] };
  }
  if (!setup.askRuntime) return { said: null, notes: [] };
  const answer = askedRuntimeFile(await setup.askRuntime());
  await stage.addJson(ASKED_RUNTIME_FILE, answer, 'the container runtime asked by `cnirec bundle` itself (no daemon answered): Version, Status, its sandboxes');
  return { said: { from: 'runtime', answer }, notes: askedRuntimeNotes(answer) };
}

async function stageDaemon(stage: Stage, daemon: DaemonState | null, setup: BundleSetup): Promise<string[]> {
  if (daemon === null) {
    const found = await setup.fallbackLog?.().catch(() => null);
    if (!found) return ['No daemon answered and no log of it was found.'];
    await stage.add('daemon/log.jsonl', found.lines.map((l) => `${l}\n`).join(''), `the daemon's last ${found.lines.length} log lines, from ${found.source}`);
    return [`No daemon answered; its log lines come from ${found.source}.`];
  }
  await stage.addJson('daemon/health.json', daemon.health, 'GET /healthz when the bundle was taken');
  await stage.addJson('daemon/tracer.json', daemon.tracer, 'GET /api/v1/tracer: the tracer and the capture mode');
  await stage.addJson('daemon/node-cni.json', daemon.nodeCni, "GET /api/v1/node/cni: the daemon's own doctor report (the conf dirs it follows)");
  await stage.addJson('daemon/readiness.json', daemon.readiness, 'GET /api/v1/node/cni/status: CNI STATUS readiness per network');
  if (daemon.runtime !== null) await stage.addJson(DAEMON_RUNTIME_FILE, daemon.runtime, "GET /api/v1/node/runtime: the container runtime as the daemon saw it (CRI conditions, transitions, leaks)");
  if (daemon.gcPlan !== null) await stage.addJson(DAEMON_GC_PLAN_FILE, daemon.gcPlan, 'GET /api/v1/node/cni/gc-plan: what a CNI GC would have freed, as the daemon judged it');
  await stage.addJson('daemon/settings.json', daemon.settings, "the daemon's settings (the token left out)");
  if (daemon.metrics !== null) await stage.add('daemon/metrics.txt', daemon.metrics, 'GET /metrics');
  await stage.add('daemon/log.jsonl', daemon.log.map((l) => `${l}\n`).join(''), `the daemon's last ${daemon.log.length} log lines (pino JSON)`);
  return [];
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

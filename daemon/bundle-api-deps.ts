/**
 * What the API is given over an opened bundle's record (daemon/open-bundle.ts): the store's readers on it,
 * the tracer as it was when the bundle was taken (when the daemon answered), the node's doctor report from
 * the bundle, readiness from its record, the container runtime as recorded (bundle-runtime-view.ts), its
 * source (node, time, window), and bundles cut from it. No
 * collector, no capture control, no watchers: nothing live.
 */

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { gcPlanSchema, type ApiDeps, type BundleDeps, type DoctorReportBody, type NodeCniStatus, type RuntimeDeps, type SourceBody } from '../api/index.js';
import type { Logger } from 'pino';
import type { CollectorStats, Redactor, TracerStatus } from '../collector/index.js';
import {
  createCacheReader,
  createCallStore,
  createConfHistory,
  createFindingsReader,
  createGcChecks,
  createHeartbeatSieve,
  createPluginBinaries,
  createRecordKnowledge,
  createRuntimeRecord,
  type Database,
} from '../store/index.js';
import { buildInfo } from './build-info.js';
import { EMPTY_REPORT, reportFromBody } from './bundle-doctor.js';
import { ASKED_RUNTIME_FILE, askedRuntimeSchema, DAEMON_GC_PLAN_FILE, DAEMON_RUNTIME_FILE, daemonRuntimeOf, type RuntimeAtBundle } from './bundle-runtime.js';
import { gcPlanFromBody, recordedRuntimeView, seenAtBundle, type BundleOrigin } from './bundle-runtime-view.js';
import { bundleFileName, bundleRequest } from './bundle-request.js';
import { makeBundle, refusalOf, type BundleSetup } from './make-bundle.js';
import type { OpenedBundle } from './read-bundle.js';
import { findUiDir } from './ui-dir.js';

export interface OpenOptions {
  readonly listen: { readonly host: string; readonly port: number };
  readonly token: string | null;
  readonly log: Logger;
  readonly tmpDir?: string;
  /** Unused on a bundle's record (redacted when it was made), but a bundle cut from it goes through the same code. */
  readonly redactor: Redactor;
}

async function readJson<T>(bundle: OpenedBundle, name: string): Promise<T | null> {
  if (!bundle.manifest.files.some((f) => f.path === name)) return null;
  try {
    return JSON.parse(await readFile(path.join(bundle.dir, ...name.split('/')), 'utf8')) as T;
  } catch {
    return null;
  }
}

export async function bundleDeps(bundle: OpenedBundle, db: Database, opts: OpenOptions): Promise<ApiDeps> {
  const m = bundle.manifest;
  const takenAtMs = Date.parse(m.takenAt);
  const health = await readJson<{ tracer?: TracerStatus; calls?: CollectorStats }>(bundle, 'daemon/health.json');
  const doctor = await readJson<DoctorReportBody>(bundle, 'node/doctor.json');
  const report = doctor ? reportFromBody(doctor) : EMPTY_REPORT;
  const store = createCallStore(db);
  const sieve = createHeartbeatSieve(db, { slowMs: Number.MAX_SAFE_INTEGER, onError: (err) => opts.log.warn({ err }, 'cannot read readiness from the bundle') });
  const record = createRecordKnowledge(db);
  const source: SourceBody = {
    kind: 'bundle',
    node: m.node,
    cnirec: buildInfo().version,
    bundle: {
      file: path.basename(bundle.file),
      takenAt: m.takenAt,
      takenBy: m.cnirec,
      window: { since: m.window.since, until: m.window.until },
      filters: m.filters,
      payloads: m.payloads,
      daemonAnswered: m.daemon.answered,
      notes: m.notes,
    },
  };
  const nodeStatus: NodeCniStatus = { confDirs: [], watchedFiles: 0, changes: { added: 0, changed: 0, removed: 0 }, problems: { error: 0, warning: 0 }, lastReportAtMs: takenAtMs, binariesHashed: 0, binaryQueueDropped: 0 };
  return {
    // The tracer as it was when the bundle was taken (when the daemon answered), else plainly not recording.
    tracerStatus: () => health?.tracer ?? notRecording,
    collectorStats: () => health?.calls ?? noCalls,
    storeStatus: () => ({ writable: true, lastError: null, failingSince: null, pendingWrites: 0, droppedWrites: 0, databaseBytes: store.databaseSizeBytes() }),
    store,
    logger: opts.log,
    token: opts.token,
    cache: { reader: createCacheReader(db) },
    findings: createFindingsReader(db),
    version: buildInfo().version,
    nodeCni: {
      report: () => ({ ...report, watchedConfDirs: doctor?.watchedConfDirs ?? [] }),
      record: () => record.read(takenAtMs),
      history: createConfHistory(db),
      binaries: createPluginBinaries(db),
      gc: createGcChecks(db),
      status: () => nodeStatus,
    },
    readiness: { networks: () => sieve.networks(), subscribe: () => () => undefined },
    runtime: await runtimeOfBundle(bundle, db),
    uiDir: findUiDir(),
    source: () => source,
    bundle: cutBundles(bundle, opts),
  };
}

/**
 * The runtime's side as the bundle recorded it: the record's transitions and sandboxes (store/runtime's record
 * reader), how the runtime was when it was taken (daemon/runtime.json, else node/runtime.json), the daemon's GC
 * plan then (daemon/gc-plan.json, else none). Nothing is asked: the machine serving it has no say.
 */
async function runtimeOfBundle(bundle: OpenedBundle, db: Database): Promise<RuntimeDeps> {
  const origin: BundleOrigin = { atMs: Date.parse(bundle.manifest.takenAt), node: bundle.manifest.node };
  const record = createRuntimeRecord(db);
  const daemonView = daemonRuntimeOf(await readJson(bundle, DAEMON_RUNTIME_FILE));
  const asked = askedRuntimeSchema.safeParse(await readJson(bundle, ASKED_RUNTIME_FILE));
  const said: RuntimeAtBundle | null = daemonView ? { from: 'daemon', view: daemonView } : asked.success ? { from: 'runtime', answer: asked.data } : null;
  const planBody = gcPlanSchema.omit({ recorded: true }).safeParse(await readJson(bundle, DAEMON_GC_PLAN_FILE));
  const plan = planBody.success ? gcPlanFromBody(planBody.data, origin) : null;
  const seen = seenAtBundle(said);
  return {
    view: () => recordedRuntimeView(record.view(), said, origin),
    subscribe: () => () => undefined,
    sandboxes: (ids) => new Map([...record.sandboxes(ids)].map(([id, s]) => [id, seen(s)] as const)),
    sandboxesOfPod: (namespace, name) => record.sandboxesOfPod(namespace, name).map(seen),
    gcPlan: () => plan,
    leakedByNetwork: () => record.leakedByNetwork(),
  };
}

/**
 * GET /api/v1/bundle on an opened bundle: the file itself when nothing narrows it, else a bundle cut from
 * its record for those pods or calls (the node's and daemon's files carried over), to pass a part on.
 */
function cutBundles(bundle: OpenedBundle, opts: OpenOptions): BundleDeps {
  const m = bundle.manifest;
  const takenAtMs = Date.parse(m.takenAt);
  return {
    async make(query) {
      const whole = Object.values(query).every((v) => v === undefined);
      if (whole) return { ok: true, file: bundle.file, name: path.basename(bundle.file), cleanup: async () => undefined };
      const request = bundleRequest({ sinceUs: query.since, untilUs: query.until, pods: query.pod, podUid: query.podUid, calls: query.call, payloads: query.payloads, maxBytes: query.maxBytes }, takenAtMs);
      const setup: BundleSetup = {
        db: bundle.recordFile,
        node: m.node,
        requested: { confDirs: [], binDirs: [] },
        cacheDirs: [],
        hostLocalDirs: [],
        redactor: opts.redactor,
        bpftrace: 'bpftrace',
        env: {},
        ...(opts.tmpDir ? { tmpDir: opts.tmpDir } : {}),
        carry: { dir: bundle.dir, manifest: m },
      };
      try {
        const made = await makeBundle(request, setup, null, takenAtMs);
        return { ok: true, file: made.file, name: bundleFileName(m.node, request, takenAtMs), cleanup: made.cleanup };
      } catch (err) {
        return refusalOf(err);
      }
    },
  };
}

const notRecording: TracerStatus = {
  running: false,
  ready: false,
  mode: 'light',
  payloadPath: null,
  pid: null,
  restarts: 0,
  lostEvents: 0,
  malformedLines: 0,
  lastRecordAt: null,
  startedAt: null,
  lastError: 'this is a bundle opened with `cnirec open`: nothing records here, and the daemon did not answer when it was taken',
  handoffInProgress: false,
  gaps: 0,
  gapSeconds: 0,
  lastGap: null,
  reorderWindowMs: 0,
  arrivalLagMs: 0,
  standby: null,
};

const noCalls: CollectorStats = {
  openCalls: 0,
  oldestRunningStartUs: null,
  callsStarted: 0,
  callsFinished: 0,
  records: 0,
  unattributed: 0,
  strayChunks: 0,
  callsMarked: { 'tracer-lost': 0, 'payload-tracer-cut': 0, 'payloads-never-came': 0, 'early-overflow': 0, 'out-of-order': 0 },
};

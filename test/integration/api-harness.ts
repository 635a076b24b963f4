/**
 * Shared by the REST API tests: realistic CNI calls as the collector
 * publishes them, a real SQLite store in a temp file fed through
 * writeEvents, and the app built by buildApp, driven in-process with inject.
 */

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { buildApp, type ApiDeps } from '../../api/app.js';
import type { TracerStatus } from '../../collector/collector.js';
import type { CaptureMode } from '../../collector/tracer-protocol.js';
import type { CapturedStream, CniCall, CollectorEvent, HelperProcess } from '../../collector/types.js';
import { createCacheStore, type CacheStore } from '../../store/cache-store.js';
import { createCallStore, openDatabase, type CallStore } from '../../store/index.js';

// ---- calls -------------------------------------------------------------------

/** 2025-11-21T18:33:20.000Z in µs: fixed, so time filters can name exact instants. */
export const T0 = 1_763_750_000_000_000;
export const T0_ISO = '2025-11-21T18:33:20.000Z';
export const T0_MS = T0 / 1000;

let nextPid = 30_000;

export const stream = (content: string | Buffer = '', extra: Partial<CapturedStream> = {}): CapturedStream => {
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  return { bytes, totalBytes: bytes.length, truncated: false, ...extra };
};

export interface CallSpec extends Partial<CniCall> {
  /** µs after T0. */
  readonly at?: number;
  readonly namespace?: string;
  readonly podName?: string;
  readonly podUid?: string;
  readonly exit?: number;
  readonly killedBy?: number;
  readonly durationMs?: number;
  /** A call with no pod (a VERSION probe, a runtime outside Kubernetes). */
  readonly noPod?: boolean;
}

const NETCONF = { cniVersion: '1.0.0', name: 'podnet', type: 'bridge', bridge: 'cni0', isGateway: true, ipMasq: true, ipam: { type: 'host-local', ranges: [[{ subnet: '10.22.0.0/16' }]] } };

/** A finished bridge ADD for demo/web-0 as the collector publishes it; override what a test needs. */
export function makeCall(spec: CallSpec = {}): CniCall {
  const { at, namespace = 'demo', podName = 'web-0', podUid = `uid-${podName}`, exit = 0, killedBy, durationMs = 42, noPod = false, ...rest } = spec;
  const pid = rest.pid ?? nextPid++;
  const startedAtUs = rest.startedAtUs ?? T0 + (at ?? 0);
  const command = rest.command === undefined ? 'ADD' : rest.command;
  const plugin = rest.plugin ?? 'bridge';
  const containerId = rest.containerId === undefined ? `sandbox-${podName}` : rest.containerId;
  const cniArgs = noPod ? null : `IgnoreUnknown=1;K8S_POD_NAMESPACE=${namespace};K8S_POD_NAME=${podName};K8S_POD_INFRA_CONTAINER_ID=${containerId};K8S_POD_UID=${podUid}`;
  const durationUs = durationMs * 1000;
  const outcome = killedBy !== undefined ? { exitCode: null, signal: killedBy, coreDumped: false } : { exitCode: exit, signal: null, coreDumped: false };
  const env: Record<string, string> = {
    CNI_COMMAND: command ?? '',
    CNI_CONTAINERID: containerId ?? '',
    CNI_NETNS: `/var/run/netns/cni-${podName}`,
    CNI_IFNAME: 'eth0',
    CNI_PATH: '/opt/cni/bin',
    ...(cniArgs ? { CNI_ARGS: cniArgs } : {}),
  };
  return {
    id: `${startedAtUs.toString(36).padStart(11, '0')}-${pid.toString(36)}`,
    pid,
    processStart: String(startedAtUs * 1000),
    ppid: 1234,
    parentId: null,
    parentProcess: { pid: 1234, comm: 'containerd', exe: '/usr/bin/containerd' },
    path: `/opt/cni/bin/${plugin}`,
    plugin,
    argv: [`/opt/cni/bin/${plugin}`],
    env,
    command,
    containerId,
    netns: `/var/run/netns/cni-${podName}`,
    ifname: 'eth0',
    cniArgs,
    pod: noPod ? null : { namespace, name: podName, uid: podUid, infraContainerId: containerId },
    traceParent: null,
    isVersionProbe: command === 'VERSION',
    startedAtUs,
    endedAtUs: startedAtUs + durationUs,
    durationUs,
    outcome,
    status: 'finished',
    incompleteReason: null,
    captureMode: 'full',
    lostRecords: false,
    stdin: stream(JSON.stringify(NETCONF)),
    stdout: stream(exit === 0 ? '{"cniVersion":"1.0.0","interfaces":[{"name":"eth0"}],"ips":[{"address":"10.22.0.5/16","gateway":"10.22.0.1"}]}' : '{"code":11,"msg":"failed to allocate for range 0: no IP addresses available in range set"}'),
    stderr: stream(),
    helpers: [],
    ...rest,
  };
}

/** The host-local IPAM call a bridge call delegates to: its child, with the parent's env and pod. */
export function delegatedIpam(parent: CniCall, spec: CallSpec = {}): CniCall {
  return makeCall({
    at: parent.startedAtUs - T0 + 5_000,
    namespace: parent.pod?.namespace,
    podName: parent.pod?.name,
    podUid: parent.pod?.uid ?? undefined,
    command: parent.command,
    plugin: 'host-local',
    parentId: parent.id,
    parentProcess: null,
    ppid: parent.pid,
    durationMs: 3,
    stdin: stream(JSON.stringify({ ...NETCONF, type: 'host-local' })),
    stdout: stream('{"cniVersion":"1.0.0","ips":[{"address":"10.22.0.5/16","gateway":"10.22.0.1"}]}'),
    ...spec,
  });
}

export function makeHelper(spec: Partial<HelperProcess> = {}): HelperProcess {
  return {
    pid: nextPid++,
    ppid: 1,
    path: '/usr/sbin/iptables',
    argv: ['iptables', '-t', 'nat', '-A', 'POSTROUTING', '-s', '10.22.0.5', '-j', 'CNI-abc'],
    startedAtUs: T0 + 20_000,
    endedAtUs: T0 + 22_500,
    outcome: { exitCode: 0, signal: null, coreDumped: false },
    stdout: stream(),
    stderr: stream(),
    ...spec,
  };
}

export const finished = (call: CniCall): CollectorEvent => ({ type: 'call.finished', call });

/** The snapshot the collector publishes at exec: nothing read yet, nothing ended. */
export function asRunning(call: CniCall): CniCall {
  return { ...call, status: 'running', endedAtUs: null, durationUs: null, outcome: null, stdout: stream(), stderr: stream() };
}

// ---- the app -------------------------------------------------------------------

export const TRACER_STATUS: TracerStatus = {
  running: true,
  ready: true,
  mode: 'full',
  pid: 4321,
  restarts: 0,
  lostEvents: 0,
  malformedLines: 0,
  lastRecordAt: T0_ISO,
  startedAt: T0_ISO,
  lastError: null,
  handoffInProgress: false,
  gaps: 0,
  gapSeconds: 0,
  lastGap: null,
  reorderWindowMs: 30,
  arrivalLagMs: 1.5,
};

export interface ApiHarness {
  readonly app: FastifyInstance;
  readonly store: CallStore;
  /** The cache store on the same database, when started with `cache: true`. */
  readonly cache: CacheStore | null;
  /** What the API was asked to do to the tracer. */
  readonly modeSwitches: CaptureMode[];
  /** Every line the app logged (debug and up), as written. */
  readonly logLines: string[];
  tracer: TracerStatus;
  write(...calls: CniCall[]): void;
  close(): Promise<void>;
}

export interface HarnessOptions {
  readonly token?: string | null;
  /** Replaces the default setCaptureMode (which records the switch and updates the status); null leaves it out. */
  readonly setCaptureMode?: ApiDeps['setCaptureMode'] | null;
  /** Lets a test break the store the API reads from. */
  readonly wrapStore?: (store: CallStore) => CallStore;
  /** Also a cache store on the same database, passed to the API as deps.cache. */
  readonly cache?: boolean;
}

export async function startApi(options: HarnessOptions = {}): Promise<ApiHarness> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cnirec-api-'));
  const db = openDatabase(path.join(dir, 'calls.db'));
  const store = createCallStore(db);
  const cache = options.cache ? createCacheStore(db, { sinceMs: T0_MS - 1000, graceMs: 1000 }) : null;
  const modeSwitches: CaptureMode[] = [];
  const state = { tracer: { ...TRACER_STATUS } };
  const defaultSetMode = async (mode: CaptureMode) => {
    modeSwitches.push(mode);
    state.tracer = { ...state.tracer, mode };
  };
  const setCaptureMode = options.setCaptureMode === null ? undefined : (options.setCaptureMode ?? defaultSetMode);
  const logLines: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void logLines.push(line) });
  const app = await buildApp({
    logger,
    tracerStatus: () => state.tracer,
    collectorStats: () => ({ openCalls: 0, callsStarted: 0, callsFinished: 0, records: 0, orphanChunks: 0 }),
    storeStatus: () => ({ writable: true, lastError: null, failingSince: null, pendingWrites: 0, droppedWrites: 0, databaseBytes: 0 }),
    store: options.wrapStore ? options.wrapStore(store) : store,
    token: options.token ?? null,
    cache,
    ...(setCaptureMode ? { setCaptureMode } : {}),
  });
  await app.ready();
  return Object.assign(state, {
    app,
    store,
    cache,
    modeSwitches,
    logLines,
    write: (...calls: CniCall[]) => store.writeEvents(calls.map(finished)),
    async close() {
      await app.close();
      store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  });
}

/** GET a JSON route in-process; answers the status and the parsed body. */
export async function getJson<T = Record<string, unknown>>(app: FastifyInstance, url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: T }> {
  const res = await app.inject({ method: 'GET', url, headers });
  return { status: res.statusCode, body: res.json() as T };
}

export interface ErrorBody {
  error: { code: string; message: string; issues?: Array<{ path: string; message: string }> };
}

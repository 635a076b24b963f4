/**
 * What the API tests share, whichever way they drive the app: realistic CNI
 * calls as the collector publishes them, the daemon's status as a healthy
 * daemon reports it, and a real SQLite store in a temp file.
 * api-harness.ts builds the whole app and drives it in-process;
 * tail-harness.ts serves the live side on a real port.
 */

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CollectorStats, TracerStatus } from '../../collector/collector.js';
import type { CapturedStream, CniCall, CollectorEvent, HelperProcess } from '../../collector/types.js';
import type { StoreStatus } from '../../store/index.js';
import { createCallStore, openDatabase, type CallStore, type Database } from '../../store/index.js';

// ---- calls -------------------------------------------------------------------

export const stream = (content: string | Buffer = '', extra: Partial<CapturedStream> = {}): CapturedStream => {
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  return { bytes, totalBytes: bytes.length, truncated: false, ...extra };
};

export interface CallSpec extends Partial<CniCall> {
  /** µs after the harness's T0. */
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

export interface CallFixtures {
  /** A finished bridge ADD for demo/web-0 as the collector publishes it; override what a test needs. */
  makeCall(spec?: CallSpec): CniCall;
  /** The host-local IPAM call a bridge call delegates to: its child, with the parent's env and pod. */
  delegatedIpam(parent: CniCall, spec?: CallSpec): CniCall;
  makeHelper(spec?: Partial<HelperProcess>): HelperProcess;
}

const NETCONF = { cniVersion: '1.0.0', name: 'podnet', type: 'bridge', bridge: 'cni0', isGateway: true, ipMasq: true, ipam: { type: 'host-local', ranges: [[{ subnet: '10.22.0.0/16' }]] } };

/**
 * Calls timed from `t0` (µs since the epoch) with pids from `firstPid` on:
 * the REST tests want fixed instants, the tail tests recent ones.
 */
export function callFixtures(t0: number, firstPid: number): CallFixtures {
  let nextPid = firstPid;

  function makeCall(spec: CallSpec = {}): CniCall {
    const { at, namespace = 'demo', podName = 'web-0', podUid = `uid-${podName}`, exit = 0, killedBy, durationMs = 42, noPod = false, ...rest } = spec;
    const pid = rest.pid ?? nextPid++;
    const startedAtUs = rest.startedAtUs ?? t0 + (at ?? 0);
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
      lostRecordsCause: null,
      stdioShared: false,
      uncapturedIo: 0,
      stdin: stream(JSON.stringify(NETCONF)),
      stdout: stream(exit === 0 ? '{"cniVersion":"1.0.0","interfaces":[{"name":"eth0"}],"ips":[{"address":"10.22.0.5/16","gateway":"10.22.0.1"}]}' : '{"code":11,"msg":"failed to allocate for range 0: no IP addresses available in range set"}'),
      stderr: stream(),
      helpers: [],
      ...rest,
    };
  }

  function delegatedIpam(parent: CniCall, spec: CallSpec = {}): CniCall {
    return makeCall({
      at: parent.startedAtUs - t0 + 5_000,
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

  function makeHelper(spec: Partial<HelperProcess> = {}): HelperProcess {
    return {
      pid: nextPid++,
      ppid: 1,
      path: '/usr/sbin/iptables',
      argv: ['iptables', '-t', 'nat', '-A', 'POSTROUTING', '-s', '10.22.0.5', '-j', 'CNI-abc'],
      startedAtUs: t0 + 20_000,
      endedAtUs: t0 + 22_500,
      outcome: { exitCode: 0, signal: null, coreDumped: false },
      stdout: stream(),
      stderr: stream(),
      ...spec,
    };
  }

  return { makeCall, delegatedIpam, makeHelper };
}

/** The snapshot the collector publishes at exec: nothing read yet, nothing ended. */
export function asRunning(call: CniCall): CniCall {
  return { ...call, status: 'running', endedAtUs: null, durationUs: null, outcome: null, stdin: stream(), stdout: stream(), stderr: stream() };
}

export const started = (call: CniCall): CollectorEvent => ({ type: 'call.started', call: asRunning(call) });
export const finished = (call: CniCall): CollectorEvent => ({ type: 'call.finished', call });
export const updated = (call: CniCall): CollectorEvent => ({ type: 'call.updated', call });

// ---- the daemon's status -------------------------------------------------------

/** A tracer that records in full mode, as a healthy daemon reports it. */
export const TRACER_STATUS: TracerStatus = {
  running: true,
  ready: true,
  mode: 'full',
  payloadPath: 'syscall-exit',
  pid: 4321,
  restarts: 0,
  lostEvents: 0,
  malformedLines: 0,
  lastRecordAt: null,
  startedAt: null,
  lastError: null,
  handoffInProgress: false,
  gaps: 0,
  gapSeconds: 0,
  lastGap: null,
  reorderWindowMs: 30,
  arrivalLagMs: 1.5,
  standby: null,
};

export const STORE_STATUS: StoreStatus = { writable: true, lastError: null, failingSince: null, pendingWrites: 0, droppedWrites: 0, databaseBytes: 0 };

export const COLLECTOR_STATS: CollectorStats = { openCalls: 0, oldestRunningStartUs: null, callsStarted: 0, callsFinished: 0, records: 0, unattributed: 0, strayChunks: 0, callsMarked: { 'tracer-lost': 0, 'payload-tracer-cut': 0, 'payloads-never-came': 0, 'early-overflow': 0, 'out-of-order': 0 } };

// ---- the store -----------------------------------------------------------------

export interface TempStore {
  readonly db: Database;
  readonly store: CallStore;
  /** Closes the store and deletes its directory. */
  remove(): void;
}

/** A call store on a fresh database in its own temp directory (`prefix` names the directory). */
export function tempStore(prefix: string): TempStore {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const db = openDatabase(path.join(dir, 'calls.db'));
  const store = createCallStore(db);
  return {
    db,
    store,
    remove() {
      store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

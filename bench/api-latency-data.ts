/**
 * The API latency benchmark's data set: a week of a busy node's CNI calls,
 * generated deterministically (seeded) and written through the store's own
 * `writeEvents`, exactly as the daemon writes finished calls.
 *
 * Shape: POD_COUNT replicas (workload slots) spread over NAMESPACE_COUNT
 * namespaces, each living through a run of sandboxes, one after another:
 * every sandbox is a bridge ADD with its delegated host-local ADD, then later
 * a bridge DEL with its host-local DEL. Who the sandbox is for follows
 * Kubernetes: a Deployment's or Job's replica comes back as a new pod with a
 * new name (the ReplicaSet's hash and a random suffix), a StatefulSet's under
 * the same name (web-0) with a new UID. Most replicas churn (that is where a
 * busy node's million calls come from); StatefulSet pods are recreated about
 * every STATEFUL_PERIOD, except BUSY_NAME_COUNT of them (one per namespace)
 * that are recreated every BUSY_PERIOD all week long, as when a pod is
 * evicted and scheduled back again and again: those names have the longest
 * stories (~300 calls), measured on their own. A failed ADD is torn down and
 * retried seconds later for the same pod, as kubelet does; now and then a
 * pod's sandbox dies and kubelet makes it a new one (P_SANDBOX_RESTART).
 * Half the ADDs are preceded by a
 * VERSION probe of bridge, as libcni runtimes send them: no CNI_ARGS, hence
 * no pod. About 2% of the calls fail: host-local running out of addresses
 * (host-local and bridge both exit 1), bridge failing to set up after IPAM
 * succeeded (host-local ADD, a rollback host-local DEL, bridge exits 1), and
 * the odd DEL that fails. Payloads are what bridge/host-local really read and print: ~600 B
 * of config on stdin (the delegate reads the same config), ~400 B of result
 * on the ADD's stdout (empty for DEL). Durations 5-500 ms, skewed short.
 *
 * Calls are generated in time order from a min-heap of per-pod next events,
 * so rows land in the table in (nearly) the order the daemon would write them.
 */

import { closeSync, constants as fsConstants, copyFileSync, existsSync, fsyncSync, openSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { callId } from '../collector/assemble/call-state.js';
import type { CapturedStream, CniCall, CollectorEvent, ParentProcess } from '../collector/types.js';
import { createCallStore, MIGRATIONS, openDatabase } from '../store/index.js';

export const DATASET_CALLS = 1_000_000;
/** Replicas (workload slots): how many pods the node runs at a time, give or take. */
export const POD_COUNT = 3_000;
export const NAMESPACE_COUNT = 50;
export const SPAN_DAYS = 7;
/** StatefulSet pods recreated all week, one per namespace: the busiest pod names. */
export const BUSY_NAME_COUNT = 50;
const SEED = 0x5eed_c41;
/** Bump when the generator changes what it writes: old cached files are then ignored. */
const GENERATOR_VERSION = 2;
const BATCH_EVENTS = 2_000;
/** Page cache of the populating connection only (SQLite's default is 2 MiB). */
const POPULATE_CACHE_KIB = 256 * 1024;

const CNI_BIN = '/opt/cni/bin';
const HOUR_US = 3_600_000_000;
const DAY_US = 24 * HOUR_US;
/** Mean time between a busy name's pods, and between any other StatefulSet pod's. */
export const BUSY_PERIOD_HOURS = 2.5;
const BUSY_PERIOD_US = BUSY_PERIOD_HOURS * HOUR_US;
const STATEFUL_PERIOD_US = 2 * DAY_US;

/** Per-sandbox odds (tuned so ~2% of all calls fail). */
const P_VERSION_PROBE = 0.5;
const P_ADD_FAILS = 0.05;
const P_ADD_FAIL_IS_IPAM = 0.6;
const P_DEL_FAILS = 0.01;
/** A pod's next sandbox is for the same pod (its sandbox died), not a new pod. */
const P_SANDBOX_RESTART = 0.02;

export interface PodName {
  readonly namespace: string;
  readonly name: string;
}

export interface DatasetInfo {
  /** The cached, pristine database file: copy it before pointing a daemon at it. */
  readonly file: string;
  readonly version: string;
  readonly calls: number;
  readonly failedCalls: number;
  readonly versionProbes: number;
  readonly sandboxes: number;
  readonly byCommand: Record<string, number>;
  readonly byPlugin: Record<string, number>;
  /** Replicas (POD_COUNT) and the pods they went through: distinct K8S_POD_UIDs and names. */
  readonly replicas: number;
  readonly podUids: number;
  readonly podNames: number;
  /** The BUSY_NAME_COUNT StatefulSet names recreated all week. */
  readonly busyPods: readonly PodName[];
  /** Calls that name a busy pod. */
  readonly busyPodCalls: number;
  readonly namespaces: number;
  /** Time range of the calls' starts, µs since the epoch. */
  readonly firstStartedAtUs: number;
  readonly lastStartedAtUs: number;
  readonly stdinBytesMean: number;
  readonly stdoutBytesMean: number;
  readonly populateSeconds: number;
  readonly populatedAt: string;
  readonly fileBytes: number;
  /** Whether the store left planner statistics (sqlite_stat1) behind; it decides some query plans. */
  readonly hasSqliteStat1: boolean;
}

export interface DatasetResult extends DatasetInfo {
  /** True when this run reused the cached file instead of populating. */
  readonly cached: boolean;
}

// ------------------------------------------------------------------ random

/** mulberry32: small, fast, good enough for synthetic data, and reproducible. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Gen {
  constructor(readonly rnd: () => number) {}
  int(min: number, max: number): number {
    return min + Math.floor(this.rnd() * (max - min + 1));
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.rnd() * xs.length)]!;
  }
  chance(p: number): boolean {
    return this.rnd() < p;
  }
  hex(n: number): string {
    let s = '';
    while (s.length < n) s += Math.floor(this.rnd() * 0x1_0000_0000).toString(16).padStart(8, '0');
    return s.slice(0, n);
  }
  alnum(n: number): string {
    const chars = 'bcdfghjklmnpqrstvwxz2456789';
    let s = '';
    for (let i = 0; i < n; i++) s += chars[Math.floor(this.rnd() * chars.length)];
    return s;
  }
  uuid(): string {
    const h = this.hex(32);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }
  mac(): string {
    const h = this.hex(12);
    return h.match(/../g)!.join(':');
  }
  /** ms in [min, max], skewed towards min (power > 1). */
  skewedMs(min: number, max: number, power: number): number {
    return min + (max - min) * this.rnd() ** power;
  }
  /** Exponential with the given mean. */
  exp(mean: number): number {
    return -Math.log(1 - this.rnd()) * mean;
  }
}

// ---------------------------------------------------------------- the node

const NAMESPACE_WORDS = [
  'kube-system', 'monitoring', 'logging', 'ingress-nginx', 'cert-manager', 'argocd', 'istio-system', 'vault',
  'payments', 'checkout', 'catalog', 'search', 'accounts', 'orders', 'shipping', 'inventory', 'billing',
  'notifications', 'recommendations', 'frontend', 'api-gateway', 'auth', 'reporting', 'analytics', 'etl',
  'ml-serving', 'ml-training', 'data-platform', 'kafka', 'redis', 'postgres', 'elastic', 'ci-runners',
  'build-cache', 'registry', 'backup', 'dns', 'chaos', 'load-test', 'staging-web', 'staging-api', 'sandbox',
  'team-alpha', 'team-bravo', 'team-charlie', 'team-delta', 'team-echo', 'team-foxtrot', 'partner-sync', 'legacy',
];
const APP_WORDS = [
  'web', 'api', 'worker', 'scheduler', 'cache', 'proxy', 'gateway', 'consumer', 'producer', 'indexer',
  'exporter', 'collector', 'db', 'queue', 'cron', 'sidecar-injector', 'controller', 'operator', 'ui', 'batch',
];

/** A Deployment's (or Job's) replica, a StatefulSet pod, or one of the busy StatefulSet names. */
type SlotKind = 'replica' | 'stateful' | 'busy';

interface Slot {
  readonly namespace: string;
  /** `app-<hash>` for a replica (each pod adds a suffix), the pod's name for a StatefulSet's. */
  readonly stem: string;
  readonly kind: SlotKind;
  readonly ipIndex: number;
}

/** The pod a sandbox is for. */
interface Pod {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

function makeSlots(g: Gen): Slot[] {
  const namespaces = NAMESPACE_WORDS.slice(0, NAMESPACE_COUNT);
  const slots: Slot[] = [];
  const perNs = Math.ceil(POD_COUNT / namespaces.length);
  let busy = 0;
  for (const ns of namespaces) {
    const stems = new Map<string, SlotKind>();
    while (stems.size < perNs && slots.length + stems.size < POD_COUNT) {
      const app = `${g.pick(APP_WORDS)}${g.chance(0.3) ? `-${g.pick(APP_WORDS)}` : ''}`;
      const replicas = g.int(1, 6);
      const statefulSet = g.chance(0.25);
      const rs = g.alnum(10);
      for (let r = 0; r < replicas && stems.size < perNs; r++) {
        const stem = statefulSet ? `${app}-${r}` : `${app}-${rs}`;
        if (stems.has(stem)) continue;
        // The namespace's first StatefulSet pod is its busy name.
        const kind: SlotKind = !statefulSet ? 'replica' : busy < BUSY_NAME_COUNT && ![...stems.values()].includes('busy') ? 'busy' : 'stateful';
        if (kind === 'busy') busy++;
        stems.set(stem, kind);
      }
    }
    for (const [stem, kind] of stems) slots.push({ namespace: ns, stem, kind, ipIndex: slots.length });
  }
  return slots;
}

// ------------------------------------------------------------- the payloads

const stream = (text: string): CapturedStream => {
  const bytes = Buffer.from(text, 'utf8');
  return { bytes, totalBytes: bytes.length, truncated: false };
};
const EMPTY = stream('');

const GATEWAY = '10.244.0.1';

function netConf(ns: string): string {
  return JSON.stringify({
    cniVersion: '1.0.0',
    name: 'k8s-pod-network',
    type: 'bridge',
    bridge: 'cni0',
    isGateway: true,
    isDefaultGateway: true,
    ipMasq: true,
    hairpinMode: true,
    mtu: 1450,
    ipam: {
      type: 'host-local',
      ranges: [[{ subnet: '10.244.0.0/16', rangeStart: '10.244.0.10', rangeEnd: '10.244.255.250', gateway: GATEWAY }]],
      routes: [{ dst: '0.0.0.0/0' }],
      dataDir: '/var/lib/cni/networks',
    },
    dns: { nameservers: ['10.96.0.10'], search: [`${ns}.svc.cluster.local`, 'svc.cluster.local', 'cluster.local'], options: ['ndots:5'] },
    runtimeConfig: { portMappings: [], bandwidth: { ingressRate: 0, egressRate: 0 }, ips: [], mac: '' },
  });
}

function ipOf(index: number, sandbox: number): string {
  const n = 10 + ((index * 7 + sandbox * 3001) % 65_000);
  return `10.244.${n >> 8}.${n & 255}`;
}

function bridgeResult(g: Gen, ip: string, netns: string, ns: string): string {
  return JSON.stringify({
    cniVersion: '1.0.0',
    interfaces: [
      { name: 'cni0', mac: '6a:3f:1c:0e:9b:42' },
      { name: `veth${g.hex(8)}`, mac: g.mac() },
      { name: 'eth0', mac: g.mac(), sandbox: netns },
    ],
    ips: [{ interface: 2, address: `${ip}/16`, gateway: GATEWAY }],
    routes: [{ dst: '0.0.0.0/0', gw: GATEWAY }],
    dns: { nameservers: ['10.96.0.10'], search: [`${ns}.svc.cluster.local`] },
  });
}

function hostLocalResult(ip: string): string {
  return JSON.stringify({
    cniVersion: '1.0.0',
    ips: [{ address: `${ip}/16`, gateway: GATEWAY }],
    routes: [{ dst: '0.0.0.0/0' }],
    dns: {},
  });
}

const IPAM_EXHAUSTED = JSON.stringify({
  cniVersion: '1.0.0',
  code: 999,
  msg: 'failed to allocate for range 0: no IP addresses available in range set: 10.244.0.10-10.244.255.250',
});
const BRIDGE_IPAM_FAILED = JSON.stringify({
  cniVersion: '1.0.0',
  code: 999,
  msg: 'failed to allocate for range 0: no IP addresses available in range set: 10.244.0.10-10.244.255.250',
  details: 'plugin type="host-local" failed (add)',
});
const BRIDGE_SETUP_FAILED = JSON.stringify({
  cniVersion: '1.0.0',
  code: 999,
  msg: 'failed to set bridge addr: "cni0" already has an IP address different from 10.244.0.1/16',
});
const DEL_FAILED = JSON.stringify({
  cniVersion: '1.0.0',
  code: 999,
  msg: 'failed to get IP addresses for "eth0": failed to lookup "eth0": interrupted system call',
});
const VERSION_STDIN = stream(JSON.stringify({ cniVersion: '1.0.0' }));
const VERSION_STDOUT = stream(JSON.stringify({ cniVersion: '1.0.0', supportedVersions: ['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'] }));

const CONTAINERD: ParentProcess = { pid: 1187, comm: 'containerd', exe: '/usr/bin/containerd' };
/** Kernel monotonic clock at the epoch µs below (only used to make plausible processStart values). */
const BOOT_EPOCH_US = 1_700_000_000_000_000;

// ------------------------------------------------------------------ calls

interface CallSpec {
  plugin: string;
  command: string;
  startedAtUs: number;
  durationMs: number;
  exitCode: number;
  parent: CniCall | null;
  env: Record<string, string>;
  stdin: CapturedStream;
  stdout: CapturedStream;
  pod: { namespace: string; name: string; uid: string; infraContainerId: string } | null;
  containerId: string | null;
  netns: string | null;
}

function makeCall(g: Gen, s: CallSpec): CniCall {
  const pid = g.int(2_000, 4_194_000);
  const startedAtUs = Math.floor(s.startedAtUs);
  const durationUs = Math.round(s.durationMs * 1000);
  const path = `${CNI_BIN}/${s.plugin}`;
  return {
    id: callId(startedAtUs, pid),
    pid,
    processStart: String((startedAtUs - BOOT_EPOCH_US) * 1000 + 1e15),
    ppid: s.parent?.pid ?? CONTAINERD.pid,
    parentId: s.parent?.id ?? null,
    parentProcess: s.parent ? null : CONTAINERD,
    path,
    plugin: s.plugin,
    argv: [path],
    env: s.env,
    command: s.command,
    containerId: s.containerId,
    netns: s.netns,
    ifname: s.command === 'VERSION' ? null : 'eth0',
    cniArgs: s.env.CNI_ARGS ?? null,
    pod: s.pod,
    traceParent: null,
    isVersionProbe: s.command === 'VERSION',
    startedAtUs,
    endedAtUs: startedAtUs + durationUs,
    durationUs,
    outcome: { exitCode: s.exitCode, signal: null, coreDumped: false },
    status: 'finished',
    incompleteReason: null,
    captureMode: 'full',
    lostRecords: false,
    lostRecordsCause: null,
    stdioShared: false,
    uncapturedIo: 0,
    stdin: s.stdin,
    stdout: s.stdout,
    stderr: EMPTY,
    helpers: [],
  };
}

interface Sandbox {
  readonly number: number;
  readonly containerId: string;
  readonly netns: string;
  readonly ip: string;
  readonly conf: CapturedStream;
}

interface SlotState {
  readonly slot: Slot;
  /** The pod of the current (or, between sandboxes, the last) sandbox. */
  pod: Pod | null;
  sandboxes: number;
  current: Sandbox | null;
  /** Whether the current sandbox's ADD failed (its DEL comes soon, then a retry). */
  failed: boolean;
}

interface HeapItem {
  t: number;
  seq: number;
  state: SlotState;
  action: 'add' | 'del';
}

/** Binary min-heap on (t, seq). */
class Heap {
  private readonly items: HeapItem[] = [];
  get size(): number {
    return this.items.length;
  }
  push(item: HeapItem): void {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(a[i]!, a[p]!)) break;
      [a[i], a[p]] = [a[p]!, a[i]!];
      i = p;
    }
  }
  pop(): HeapItem | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && less(a[l]!, a[m]!)) m = l;
        if (r < a.length && less(a[r]!, a[m]!)) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m]!, a[i]!];
        i = m;
      }
    }
    return top;
  }
}

const less = (x: HeapItem, y: HeapItem): boolean => x.t < y.t || (x.t === y.t && x.seq < y.seq);

/** Calls per sandbox on average (ADD pair + DEL pair + probes + rollbacks), to size the lifetimes. */
const CALLS_PER_SANDBOX = 4 + P_VERSION_PROBE + P_ADD_FAILS * (1 - P_ADD_FAIL_IS_IPAM);

/**
 * Every call of the data set, in start order (±0.5 s within an event), with
 * the pods it names. `endUs` is where the week ends.
 */
function* generateCalls(endUs: number, slots: readonly Slot[], g: Gen, total: number): Generator<CniCall> {
  const spanUs = SPAN_DAYS * DAY_US;
  const startUs = endUs - spanUs;
  const count = (kind: SlotKind) => slots.filter((s) => s.kind === kind).length;
  // The replicas make up whatever the StatefulSets leave of the week's sandboxes.
  const fixedSandboxes = (count('busy') * spanUs) / BUSY_PERIOD_US + (count('stateful') * spanUs) / STATEFUL_PERIOD_US;
  const replicaSandboxes = Math.max(count('replica'), total / CALLS_PER_SANDBOX - fixedSandboxes);
  const periodOf: Record<SlotKind, number> = {
    busy: BUSY_PERIOD_US,
    stateful: STATEFUL_PERIOD_US,
    replica: (spanUs * count('replica')) / replicaSandboxes,
  };
  const gapMeanUs = 20_000_000;
  const lifetimeMeanUs = (kind: SlotKind) => Math.max(60_000_000, periodOf[kind] - gapMeanUs);
  const heap = new Heap();
  let seq = 0;
  for (const slot of slots) {
    heap.push({ t: startUs + g.rnd() * periodOf[slot.kind], seq: seq++, state: { slot, pod: null, sandboxes: 0, current: null, failed: false }, action: 'add' });
  }

  let emitted = 0;
  while (emitted < total) {
    const item = heap.pop();
    if (!item) break;
    const { state, t } = item;
    const { slot } = state;
    const calls: CniCall[] = [];
    if (item.action === 'add') {
      // kubelet retries a failed sandbox for the same pod; otherwise the slot's next pod, named as its kind names them.
      if (state.pod === null || !(state.failed || g.chance(P_SANDBOX_RESTART))) {
        state.pod = { namespace: slot.namespace, name: slot.kind === 'replica' ? `${slot.stem}-${g.alnum(5)}` : slot.stem, uid: g.uuid() };
      }
      const pod = state.pod;
      const sb: Sandbox = {
        number: state.sandboxes++,
        containerId: g.hex(64),
        netns: `/var/run/netns/cni-${g.uuid()}`,
        ip: ipOf(slot.ipIndex, state.sandboxes),
        conf: stream(netConf(pod.namespace)),
      };
      state.current = sb;
      if (g.chance(P_VERSION_PROBE)) {
        calls.push(
          makeCall(g, {
            plugin: 'bridge',
            command: 'VERSION',
            startedAtUs: t - g.int(3_000, 40_000),
            durationMs: g.skewedMs(5, 12, 2),
            exitCode: 0,
            parent: null,
            env: { CNI_COMMAND: 'VERSION', CNI_CONTAINERID: '', CNI_NETNS: '', CNI_IFNAME: '', CNI_ARGS: '', CNI_PATH: CNI_BIN },
            stdin: VERSION_STDIN,
            stdout: VERSION_STDOUT,
            pod: null,
            containerId: null,
            netns: null,
          }),
        );
      }
      const fails = g.chance(P_ADD_FAILS);
      const ipamFails = fails && g.chance(P_ADD_FAIL_IS_IPAM);
      state.failed = fails;
      calls.push(...sandboxCalls(g, pod, sb, 'ADD', t, fails ? (ipamFails ? 'ipam' : 'bridge') : 'none'));
      const next = fails ? g.int(1_000_000, 5_000_000) : Math.max(30_000_000, g.exp(lifetimeMeanUs(slot.kind)));
      heap.push({ t: t + next, seq: seq++, state, action: 'del' });
    } else {
      const sb = state.current!;
      calls.push(...sandboxCalls(g, state.pod!, sb, 'DEL', t, g.chance(P_DEL_FAILS) ? 'del' : 'none'));
      const gap = state.failed ? g.int(5_000_000, 30_000_000) : g.exp(gapMeanUs);
      heap.push({ t: t + 1_000_000 + gap, seq: seq++, state, action: 'add' });
      state.current = null;
    }
    for (const c of calls) {
      if (emitted >= total) return;
      emitted++;
      yield c;
    }
  }
}

type Failure = 'none' | 'ipam' | 'bridge' | 'del';

/** A bridge call and what it delegates to host-local, as one sandbox event. */
function sandboxCalls(g: Gen, pod: Pod, sb: Sandbox, command: 'ADD' | 'DEL', t: number, failure: Failure): CniCall[] {
  const cniArgs = `K8S_POD_INFRA_CONTAINER_ID=${sb.containerId};K8S_POD_UID=${pod.uid};IgnoreUnknown=1;K8S_POD_NAMESPACE=${pod.namespace};K8S_POD_NAME=${pod.name}`;
  const env = (cmd: string): Record<string, string> => ({
    CNI_COMMAND: cmd,
    CNI_CONTAINERID: sb.containerId,
    CNI_NETNS: sb.netns,
    CNI_IFNAME: 'eth0',
    CNI_ARGS: cniArgs,
    CNI_PATH: CNI_BIN,
  });
  const common = {
    pod: { namespace: pod.namespace, name: pod.name, uid: pod.uid, infraContainerId: sb.containerId },
    containerId: sb.containerId,
    netns: sb.netns,
    stdin: sb.conf,
  };

  let bridgeMs: number;
  if (command === 'ADD') bridgeMs = failure === 'ipam' ? g.skewedMs(10, 60, 1.5) : g.skewedMs(40, 500, 2.5);
  else bridgeMs = g.skewedMs(10, 320, 2);
  const childOffsetMs = g.skewedMs(1, 6, 1);
  const childMaxMs = Math.max(5, bridgeMs - childOffsetMs - 2);
  const childMs = Math.min(childMaxMs, command === 'ADD' ? g.skewedMs(5, 40, 2) : g.skewedMs(5, 20, 2));

  const bridgeStdout =
    failure === 'ipam' ? BRIDGE_IPAM_FAILED : failure === 'bridge' ? BRIDGE_SETUP_FAILED : failure === 'del' ? DEL_FAILED : command === 'ADD' ? bridgeResult(g, sb.ip, sb.netns, pod.namespace) : '';
  const bridge = makeCall(g, {
    ...common,
    plugin: 'bridge',
    command,
    startedAtUs: t,
    durationMs: bridgeMs,
    exitCode: failure === 'none' ? 0 : 1,
    parent: null,
    env: env(command),
    stdout: stream(bridgeStdout),
  });
  const hostLocal = makeCall(g, {
    ...common,
    plugin: 'host-local',
    command,
    startedAtUs: t + childOffsetMs * 1000,
    durationMs: childMs,
    exitCode: failure === 'ipam' ? 1 : 0,
    parent: bridge,
    env: env(command),
    stdout: stream(failure === 'ipam' ? IPAM_EXHAUSTED : command === 'ADD' ? hostLocalResult(sb.ip) : ''),
  });
  const out = [bridge, hostLocal];
  if (failure === 'bridge') {
    // bridge gives the address back before failing: a delegated host-local DEL.
    const delAt = t + (childOffsetMs + childMs + 1) * 1000;
    const room = Math.max(5, bridgeMs - (childOffsetMs + childMs + 2));
    out.push(
      makeCall(g, {
        ...common,
        plugin: 'host-local',
        command: 'DEL',
        startedAtUs: delAt,
        durationMs: Math.min(room, g.skewedMs(5, 15, 2)),
        exitCode: 0,
        parent: bridge,
        env: env('DEL'),
        stdout: EMPTY,
      }),
    );
  }
  return out;
}

/** The data set's replicas, its busy pod names and its calls (lazily, in time order), ending the week at `endUs`. */
export function dataset(total: number, endUs: number): { replicas: number; busyPods: PodName[]; calls: Iterable<CniCall> } {
  const g = new Gen(seededRandom(SEED));
  const slots = makeSlots(g);
  const busyPods = slots.filter((s) => s.kind === 'busy').map((s) => ({ namespace: s.namespace, name: s.stem }));
  return { replicas: slots.length, busyPods, calls: generateCalls(endUs, slots, g, total) };
}

// ------------------------------------------------------------- population

export function datasetVersion(calls: number): string {
  const schema = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);
  return `g${GENERATOR_VERSION}-s${schema}-${calls}c-${POD_COUNT}p-${NAMESPACE_COUNT}ns-${SEED.toString(16)}`;
}

export interface EnsureOptions {
  readonly calls: number;
  readonly cacheDir: string;
  /** Ignore a cached file and populate again. */
  readonly rebuild: boolean;
  readonly progress: (msg: string) => void;
}

/** Returns the cached data set, or populates it (minutes) and caches it. */
export function ensureDataset(opts: EnsureOptions): DatasetResult {
  const version = datasetVersion(opts.calls);
  mkdirSync(opts.cacheDir, { recursive: true, mode: 0o700 });
  const file = path.join(opts.cacheDir, `${version}.db`);
  const metaFile = path.join(opts.cacheDir, `${version}.json`);
  if (!opts.rebuild && existsSync(file) && existsSync(metaFile)) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as DatasetInfo;
    if (meta.version === version && statSync(file).size === meta.fileBytes) {
      opts.progress(`reusing cached data set ${file} (${meta.calls} calls, populated in ${meta.populateSeconds.toFixed(1)} s on ${meta.populatedAt})`);
      return { ...meta, file, cached: true };
    }
  }
  const building = `${file}.building`;
  for (const f of [building, `${building}-wal`, `${building}-shm`]) rmSync(f, { force: true });
  const info = populate(building, opts.calls, version, opts.progress);
  renameSync(building, file);
  const meta: DatasetInfo = { ...info, file };
  writeFileSync(metaFile, `${JSON.stringify(meta)}\n`);
  return { ...meta, cached: false };
}

function populate(file: string, total: number, version: string, progress: (msg: string) => void): Omit<DatasetInfo, 'file'> {
  // End the week on a whole minute shortly before now, so "the last day" is recent.
  const endUs = Math.floor(Date.now() / 60_000) * 60_000_000;
  const { replicas, busyPods, calls: generated } = dataset(total, endUs);
  const busyNames = new Set(busyPods.map((p) => `${p.namespace}/${p.name}`));
  const db = openDatabase(file);
  // Only this connection's page cache (not stored in the file): index inserts at random
  // places (pod, container id) stop re-reading pages from the OS once the indexes outgrow 2 MiB.
  db.pragma(`cache_size = -${POPULATE_CACHE_KIB}`);
  const store = createCallStore(db);
  const byCommand: Record<string, number> = {};
  const byPlugin: Record<string, number> = {};
  let failed = 0;
  let probes = 0;
  let first = Number.POSITIVE_INFINITY;
  let last = 0;
  let stdinBytes = 0;
  let stdoutBytes = 0;
  let calls = 0;
  let sandboxes = 0;
  let busyPodCalls = 0;
  const podUids = new Set<string>();
  const podNames = new Set<string>();
  const namespaces = new Set<string>();
  let batch: CollectorEvent[] = [];
  progress(`populating ${total} calls into ${file} (batches of ${BATCH_EVENTS} events, one transaction each)`);
  const t0 = process.hrtime.bigint();
  let lastReport = Date.now();
  for (const call of generated) {
    batch.push({ type: 'call.finished', call });
    calls++;
    byCommand[call.command ?? 'null'] = (byCommand[call.command ?? 'null'] ?? 0) + 1;
    byPlugin[call.plugin] = (byPlugin[call.plugin] ?? 0) + 1;
    if (call.outcome?.exitCode !== 0) failed++;
    if (call.isVersionProbe) probes++;
    if (call.command === 'ADD' && call.parentId === null) sandboxes++;
    if (call.pod) {
      const name = `${call.pod.namespace}/${call.pod.name}`;
      podNames.add(name);
      namespaces.add(call.pod.namespace);
      if (call.pod.uid !== null) podUids.add(call.pod.uid);
      if (busyNames.has(name)) busyPodCalls++;
    }
    first = Math.min(first, call.startedAtUs);
    last = Math.max(last, call.startedAtUs);
    stdinBytes += call.stdin.bytes.length;
    stdoutBytes += call.stdout.bytes.length;
    if (batch.length >= BATCH_EVENTS) {
      store.writeEvents(batch);
      batch = [];
      if (Date.now() - lastReport > 10_000) {
        lastReport = Date.now();
        const s = Number(process.hrtime.bigint() - t0) / 1e9;
        progress(`  ${calls} calls written, ${Math.round(calls / s)} calls/s`);
      }
    }
  }
  store.writeEvents(batch);
  const populateSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
  // The store's own close (which also runs PRAGMA optimize, as the daemon does on shutdown).
  store.close();
  const check = openDatabase(file);
  const hasSqliteStat1 = (check.prepare("SELECT count(*) AS n FROM sqlite_schema WHERE name = 'sqlite_stat1'").get() as { n: number }).n > 0;
  check.pragma('wal_checkpoint(TRUNCATE)');
  check.close();
  progress(`populated ${calls} calls in ${populateSeconds.toFixed(1)} s (${Math.round(calls / populateSeconds)} calls/s)`);
  return {
    version,
    calls,
    failedCalls: failed,
    versionProbes: probes,
    sandboxes,
    byCommand,
    byPlugin,
    replicas,
    podUids: podUids.size,
    podNames: podNames.size,
    busyPods,
    busyPodCalls,
    namespaces: namespaces.size,
    firstStartedAtUs: first,
    lastStartedAtUs: last,
    stdinBytesMean: Math.round(stdinBytes / calls),
    stdoutBytesMean: Math.round(stdoutBytes / calls),
    populateSeconds,
    populatedAt: new Date().toISOString(),
    fileBytes: statSync(file).size,
    hasSqliteStat1,
  };
}

/**
 * A private copy of the cached file for one run (the daemon writes to it),
 * flushed to disk: otherwise the daemon's first WAL checkpoint fsyncs the
 * file and waits for gigabytes of the copy's writeback, stalling the API.
 */
export function copyDataset(info: DatasetInfo, dir: string): string {
  const target = path.join(dir, 'cnirec.db');
  copyFileSync(info.file, target, fsConstants.COPYFILE_FICLONE);
  const fd = openSync(target, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return target;
}

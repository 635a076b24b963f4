// Finished (or running) CNI calls shaped like the collector's, for store
// tests that need many of them: a bridge ADD with a delegated host-local ADD
// and a helper process, payloads of a chosen size.
import type { CapturedStream, CniCall, CollectorEvent, HelperProcess } from '../../collector/types.js';

let nextPid = 10_000;

const stream = (bytes: Buffer): CapturedStream => ({ bytes, totalBytes: bytes.length, truncated: false });

export interface SyntheticCallSpec {
  readonly startedAtUs: number;
  readonly plugin?: string;
  readonly parentId?: string | null;
  readonly running?: boolean;
  readonly payloadBytes?: number;
  readonly helpers?: number;
}

export function syntheticCall(spec: SyntheticCallSpec): CniCall {
  const pid = nextPid++;
  const plugin = spec.plugin ?? 'bridge';
  const payload = Buffer.alloc(spec.payloadBytes ?? 600, 0x61);
  const helper: HelperProcess = {
    pid: pid + 100_000,
    ppid: pid,
    path: '/usr/sbin/iptables',
    argv: ['iptables', '-t', 'nat', '-A', 'CNI-x'],
    startedAtUs: spec.startedAtUs + 10,
    endedAtUs: spec.startedAtUs + 20,
    outcome: { exitCode: 0, signal: null, coreDumped: false },
    stdout: stream(Buffer.from('ok')),
    stderr: stream(Buffer.alloc(0)),
  };
  const running = spec.running === true;
  return {
    id: `${Math.floor(spec.startedAtUs).toString(36).padStart(11, '0')}-${pid.toString(36)}`,
    pid,
    processStart: String(spec.startedAtUs * 1000),
    ppid: 4242,
    parentId: spec.parentId ?? null,
    parentProcess: { pid: 4242, comm: 'containerd', exe: '/usr/bin/containerd' },
    path: `/opt/cni/bin/${plugin}`,
    plugin,
    argv: [`/opt/cni/bin/${plugin}`],
    env: { CNI_COMMAND: 'ADD', CNI_ARGS: 'K8S_POD_NAMESPACE=default;K8S_POD_NAME=web' },
    command: 'ADD',
    containerId: 'c0ffee',
    netns: '/var/run/netns/cni-1',
    ifname: 'eth0',
    cniArgs: 'K8S_POD_NAMESPACE=default;K8S_POD_NAME=web',
    pod: { namespace: 'default', name: 'web', uid: null, infraContainerId: null },
    traceParent: null,
    isVersionProbe: false,
    startedAtUs: spec.startedAtUs,
    endedAtUs: running ? null : spec.startedAtUs + 1_000,
    durationUs: running ? null : 1_000,
    outcome: running ? null : { exitCode: 0, signal: null, coreDumped: false },
    status: running ? 'running' : 'finished',
    incompleteReason: null,
    captureMode: 'full',
    lostRecords: false,
    lostRecordsCause: null,
    stdioShared: false,
    uncapturedIo: 0,
    stdin: stream(payload),
    stdout: stream(running ? Buffer.alloc(0) : payload),
    stderr: stream(Buffer.alloc(0)),
    helpers: Array.from({ length: spec.helpers ?? 1 }, () => helper),
  };
}

/** A bridge call and the host-local call it delegated to, as the events the store takes. */
export function syntheticTree(startedAtUs: number, opts: { payloadBytes?: number; running?: boolean } = {}): { root: CniCall; child: CniCall; events: CollectorEvent[] } {
  const root = syntheticCall({ startedAtUs, payloadBytes: opts.payloadBytes, running: opts.running });
  const child = syntheticCall({ startedAtUs: startedAtUs + 100, plugin: 'host-local', parentId: root.id, payloadBytes: opts.payloadBytes });
  const type = (c: CniCall) => (c.status === 'running' ? 'call.started' : 'call.finished');
  return { root, child, events: [root, child].map((call) => ({ type: type(call), call }) as CollectorEvent) };
}

/**
 * A STATUS heartbeat kept whole (a failing answer, say) as the store gets it: a bridge STATUS and the
 * host-local STATUS it delegated to, both of `network` (null: not known), no pod.
 */
export function syntheticStatusTree(startedAtUs: number, network: string | null, opts: { payloadBytes?: number } = {}): { root: CniCall; child: CniCall; events: CollectorEvent[] } {
  const status = (c: CniCall): CniCall => ({
    ...c,
    command: 'STATUS',
    env: { CNI_COMMAND: 'STATUS' },
    containerId: null,
    netns: null,
    ifname: null,
    cniArgs: null,
    pod: null,
    network,
    outcome: { exitCode: 1, signal: null, coreDumped: false },
  });
  const root = status(syntheticCall({ startedAtUs, payloadBytes: opts.payloadBytes, helpers: 0 }));
  const child = status(syntheticCall({ startedAtUs: startedAtUs + 100, plugin: 'host-local', parentId: root.id, payloadBytes: opts.payloadBytes, helpers: 0 }));
  return { root, child, events: [root, child].map((call) => ({ type: 'call.finished', call }) as CollectorEvent) };
}

/**
 * Calls shaped as the collector publishes them, for the web view's benchmark: a pod's sandboxes, each an
 * ADD of bridge delegating to host-local (with two helpers) and a DEL doing the same, some ADDs failing
 * as in a DEL/ADD loop; and single calls for a live tail.
 */

import type { CapturedStream, CniCall, HelperProcess } from '../../collector/index.js';

const stream = (text: string): CapturedStream => ({ bytes: Buffer.from(text), totalBytes: Buffer.byteLength(text), truncated: false });
const CONF = JSON.stringify({ cniVersion: '1.0.0', name: 'podnet', type: 'bridge', bridge: 'cni0', isGateway: true, ipMasq: true, ipam: { type: 'host-local', ranges: [[{ subnet: '10.22.0.0/16' }]] } });
const RESULT = '{"cniVersion":"1.0.0","interfaces":[{"name":"eth0"}],"ips":[{"address":"10.22.0.5/16","gateway":"10.22.0.1"}]}';

let nextPid = 100_000;

export interface CallShape {
  readonly namespace: string;
  readonly pod: string;
  readonly containerId: string;
  readonly command: 'ADD' | 'DEL';
  readonly plugin: string;
  readonly startedAtUs: number;
  readonly durationUs: number;
  readonly exitCode?: number;
  readonly parentId?: string | null;
  readonly helpers?: number;
}

export function benchCall(shape: CallShape): CniCall {
  const pid = nextPid++;
  const cniArgs = `IgnoreUnknown=1;K8S_POD_NAMESPACE=${shape.namespace};K8S_POD_NAME=${shape.pod};K8S_POD_INFRA_CONTAINER_ID=${shape.containerId};K8S_POD_UID=uid-${shape.pod}`;
  const exitCode = shape.exitCode ?? 0;
  const helpers: HelperProcess[] = Array.from({ length: shape.helpers ?? 0 }, (_, i) => ({
    pid: nextPid++,
    ppid: pid,
    path: '/usr/sbin/iptables',
    argv: ['iptables', '-t', 'nat', '-A', 'POSTROUTING', '-s', '10.22.0.5', '-j', `CNI-${i}`],
    startedAtUs: shape.startedAtUs + shape.durationUs * (0.4 + i * 0.2),
    endedAtUs: shape.startedAtUs + shape.durationUs * (0.5 + i * 0.2),
    outcome: { exitCode: 0, signal: null, coreDumped: false },
    stdout: stream(''),
    stderr: stream(''),
  }));
  return {
    id: `${Math.floor(shape.startedAtUs).toString(36).padStart(11, '0')}-${pid.toString(36)}`,
    pid,
    processStart: String(shape.startedAtUs * 1000),
    ppid: shape.parentId ? pid - 1 : 1234,
    parentId: shape.parentId ?? null,
    parentProcess: shape.parentId ? null : { pid: 1234, comm: 'containerd', exe: '/usr/bin/containerd' },
    path: `/opt/cni/bin/${shape.plugin}`,
    plugin: shape.plugin,
    argv: [`/opt/cni/bin/${shape.plugin}`],
    env: { CNI_COMMAND: shape.command, CNI_CONTAINERID: shape.containerId, CNI_NETNS: `/var/run/netns/${shape.containerId}`, CNI_IFNAME: 'eth0', CNI_PATH: '/opt/cni/bin', CNI_ARGS: cniArgs },
    command: shape.command,
    containerId: shape.containerId,
    netns: `/var/run/netns/${shape.containerId}`,
    ifname: 'eth0',
    cniArgs,
    pod: { namespace: shape.namespace, name: shape.pod, uid: `uid-${shape.pod}`, infraContainerId: shape.containerId },
    traceParent: null,
    isVersionProbe: false,
    startedAtUs: shape.startedAtUs,
    endedAtUs: shape.startedAtUs + shape.durationUs,
    durationUs: shape.durationUs,
    outcome: { exitCode, signal: null, coreDumped: false },
    status: 'finished',
    incompleteReason: null,
    captureMode: 'full',
    lostRecords: false,
    lostRecordsCause: null,
    stdioShared: false,
    uncapturedIo: 0,
    stdin: stream(CONF),
    stdout: stream(exitCode === 0 ? RESULT : '{"code":11,"msg":"failed to allocate for range 0: no IP addresses available in range set"}'),
    stderr: stream(''),
    helpers,
  };
}

/** `sandboxes` × (ADD bridge → host-local, DEL bridge → host-local): 4 calls each; every fifth ADD fails. */
export function busyPod(namespace: string, pod: string, sandboxes: number, startUs: number): CniCall[] {
  const calls: CniCall[] = [];
  for (let s = 0; s < sandboxes; s++) {
    const containerId = `${s.toString(16).padStart(8, '0')}${'ab'.repeat(28)}`;
    const at = startUs + s * 2_000_000;
    const failing = s % 5 === 4;
    for (const [command, offset] of [['ADD', 0], ['DEL', 900_000]] as const) {
      const parent = benchCall({ namespace, pod, containerId, command, plugin: 'bridge', startedAtUs: at + offset, durationUs: 40_000, exitCode: failing && command === 'ADD' ? 1 : 0, helpers: command === 'ADD' ? 2 : 0 });
      const child = benchCall({ namespace, pod, containerId, command, plugin: 'host-local', startedAtUs: at + offset + 5_000, durationUs: 6_000, exitCode: failing && command === 'ADD' ? 1 : 0, parentId: parent.id });
      calls.push(parent, child);
    }
  }
  return calls;
}

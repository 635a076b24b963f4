/**
 * The runtime's answers as the CRI poller publishes them, for the integration tests that feed the tracker:
 * a sandbox and a snapshot with every field filled, and the two states of the conditions that matter.
 */

import type { RuntimeSandbox, RuntimeSnapshot } from '../../collector/index.js';
import { T0_MS } from './api-harness.js';

export const CONDITIONS_READY = [
  { type: 'RuntimeReady', status: true, reason: '', message: '' },
  { type: 'NetworkReady', status: true, reason: '', message: '' },
];
/** What containerd 1.6 says while its CNI conf dir holds nothing it can load. */
export const CONDITIONS_NOT_READY = [
  CONDITIONS_READY[0]!,
  { type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady', message: 'Network plugin returns error: cni plugin not initialized' },
];

/** A ready sandbox `id` of pod demo/pod-<id>, made at T0. */
export const runtimeSandbox = (id: string, over: Partial<RuntimeSandbox> = {}): RuntimeSandbox => ({
  id,
  namespace: 'demo',
  name: `pod-${id}`,
  uid: `uid-${id}`,
  attempt: 0,
  state: 'ready',
  createdAtMs: T0_MS,
  labels: { 'io.kubernetes.pod.name': over.name ?? `pod-${id}` },
  annotations: {},
  runtimeHandler: '',
  ip: '10.22.0.5',
  additionalIps: [],
  ...over,
});

/** containerd 1.6.20 answering at `atMs`, ready, no sandboxes, answering since T0. */
export const runtimeSnapshot = (atMs: number, over: Partial<RuntimeSnapshot> = {}): RuntimeSnapshot => ({
  atMs,
  endpoint: '/run/containerd/containerd.sock',
  reachable: true,
  version: { name: 'containerd', version: '1.6.20', apiVersion: 'v1' },
  conditions: CONDITIONS_READY,
  sandboxes: [],
  listedAtMs: atMs,
  problem: null,
  answeringSinceMs: T0_MS,
  ...over,
});

// A call as the CLI receives it from the API (the API's own type), for the formatting tests.
import type { CallSummary } from '../../api/index.js';

const size = { bytes: 0, totalBytes: 0, truncated: false };

export const callView = (over: Partial<CallSummary> = {}): CallSummary => ({
  id: '0hodl3r7540-5a34',
  command: 'ADD',
  plugin: 'bridge',
  path: '/opt/cni/bin/bridge',
  pid: 1,
  ppid: 1,
  parentId: null,
  parentProcess: null,
  containerId: 'c0ffee0123456789',
  netns: null,
  ifname: 'eth0',
  pod: { namespace: 'shop', name: 'cart-0', uid: 'u1' },
  podInfraContainerId: null,
  traceParent: null,
  startedAt: '2026-11-21T18:33:20.104Z',
  endedAt: '2026-11-21T18:33:20.144Z',
  durationMs: 40.5,
  exitCode: 0,
  signal: null,
  coreDumped: false,
  ok: true,
  status: 'finished',
  incomplete: false,
  incompleteReason: null,
  error: null,
  isVersionProbe: false,
  captureMode: 'full',
  lostRecords: false,
  stdioShared: false,
  uncapturedIo: 0,
  payload: { stdin: size, stdout: size, stderr: size },
  envTruncated: false,
  pathTruncated: false,
  outputAfterExit: { stdout: null, stderr: null },
  ...over,
});

/** 42 s after callView's start. */
export const NOW_MS = Date.parse('2026-11-21T18:34:02.104Z');

// A call as the CLI receives it from the API (the API's own type), for the formatting tests.
import type { CallDetail, CallSummary, Payload } from '../../api/index.js';

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
  network: null,
  gcDriven: false,
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
  lostRecordsCause: null,
  stdioShared: false,
  uncapturedIo: 0,
  payload: { stdin: size, stdout: size, stderr: size },
  envTruncated: false,
  pathTruncated: false,
  outputAfterExit: { stdout: null, stderr: null },
  changeSummary: null,
  kernelMessages: [],
  ...over,
});

/** 42 s after callView's start. */
export const NOW_MS = Date.parse('2026-11-21T18:34:02.104Z');

const payload = (text: string): Payload => {
  const bytes = Buffer.from(text);
  return { text, base64: bytes.toString('base64'), bytes: bytes.length, totalBytes: bytes.length, truncated: false, redacted: false, redactedPointers: [] };
};

/** A call's page as `cnirec show` receives it: a whole record, payloads as given (text). */
export const callDetailView = (over: Partial<CallDetail> = {}, streams: { stdin?: string; stdout?: string; stderr?: string } = {}): CallDetail => ({
  ...callView(),
  argv: ['/opt/cni/bin/bridge'],
  execChain: ['/opt/cni/bin/bridge'],
  env: { CNI_COMMAND: 'ADD' },
  cniArgs: null,
  stdin: payload(streams.stdin ?? '{"cniVersion":"1.0.0"}\n'),
  stdout: payload(streams.stdout ?? '{"cniVersion":"1.0.0","ips":[]}\n'),
  stderr: payload(streams.stderr ?? ''),
  config: null,
  configSource: null,
  result: null,
  resultSource: null,
  children: [],
  helpers: [],
  changes: null,
  cache: null,
  ...over,
});

/**
 * Every attribute name cnirec puts on spans and log records, declared once.
 * Names of the OpenTelemetry semantic conventions where one exists: stable
 * ones imported from the package, incubating ones copied here (the package
 * asks applications to copy rather than import unstable names, which may
 * change between its releases). The rest is cnirec's `cni.*` namespace,
 * documented in the README ("Cluster-wide: OpenTelemetry").
 */

import {
  ATTR_CONTAINER_ID,
  ATTR_ERROR_TYPE,
  ATTR_K8S_NAMESPACE_NAME,
  ATTR_K8S_POD_NAME,
  ATTR_K8S_POD_UID,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
} from '@opentelemetry/semantic-conventions';

export const SEMCONV = {
  serviceName: ATTR_SERVICE_NAME,
  serviceVersion: ATTR_SERVICE_VERSION,
  k8sNamespaceName: ATTR_K8S_NAMESPACE_NAME,
  k8sPodName: ATTR_K8S_POD_NAME,
  k8sPodUid: ATTR_K8S_POD_UID,
  containerId: ATTR_CONTAINER_ID,
  errorType: ATTR_ERROR_TYPE,
  // Incubating (semantic-conventions/incubating), copied:
  hostName: 'host.name',
  processPid: 'process.pid',
  processParentPid: 'process.parent_pid',
  processExecutablePath: 'process.executable.path',
  processExecutableName: 'process.executable.name',
  processCommandArgs: 'process.command_args',
  processExitCode: 'process.exit.code',
} as const;

/** cnirec's own namespace, for what the conventions have no name for. */
export const CNI = {
  command: 'cni.command',
  plugin: 'cni.plugin',
  ifname: 'cni.ifname',
  netns: 'cni.netns',
  args: 'cni.args',
  networkName: 'cni.network.name',
  cniVersion: 'cni.version',
  errorCode: 'cni.error.code',
  errorMsg: 'cni.error.msg',
  errorDetails: 'cni.error.details',
  callId: 'cni.call.id',
  callStatus: 'cni.call.status',
  incompleteReason: 'cni.call.incomplete_reason',
  endUnknown: 'cni.call.end_unknown',
  versionProbe: 'cni.version_probe',
  captureMode: 'cni.capture_mode',
  lostRecords: 'cni.lost_records',
  lostRecordsCause: 'cni.lost_records.cause',
  signal: 'cni.signal',
  coreDumped: 'cni.core_dumped',
  callerPid: 'cni.caller.pid',
  callerName: 'cni.caller.name',
  callerExecutablePath: 'cni.caller.executable.path',
  traceparent: 'cni.traceparent',
  helperSeq: 'cni.helper.seq',
  helperCount: 'cni.helper.count',
  /** `cni.stdout.after_exit_bytes`: stored bytes of the stream written after the plugin exited (on `cni.call.updated`). */
  afterExitBytes: (stream: string) => `cni.${stream}.after_exit_bytes`,
  /** `cni.stdin.bytes`…: bytes the process moved through the stream in all. */
  streamBytes: (stream: string) => `cni.${stream}.bytes`,
  // On the payload span events (cni.stdin, cni.stdout, cni.stderr) and log records:
  payload: 'cni.payload',
  payloadEncoding: 'cni.payload.encoding',
  payloadBytes: 'cni.payload.bytes',
  payloadTruncated: 'cni.payload.truncated',
  payloadCapped: 'cni.payload.capped',
  payloadRedactedPointers: 'cni.payload.redacted_pointers',
  // On the cni.change span events: one per change the call made in the kernel.
  changeNetns: 'cni.change.netns',
  changeObject: 'cni.change.object',
  changeAction: 'cni.change.action',
  changeSubject: 'cni.change.subject',
  changeOk: 'cni.change.ok',
  changeErrno: 'cni.change.errno',
  changeMessage: 'cni.change.message',
  // On the cni.kernel.message span events: the kernel's own text for a request.
  kernelMessage: 'cni.kernel.message',
  kernelProcess: 'cni.kernel.process',
} as const;

/** Attributes of the daemon's own log records (tracer gaps, findings). */
export const CNIREC = {
  tracerEventKind: 'cnirec.tracer.event',
  tracerDetail: (key: string) => `cnirec.tracer.${key}`,
  findingId: 'cnirec.finding.id',
  findingKind: 'cnirec.finding.kind',
  findingState: 'cnirec.finding.state',
  findingPath: 'cnirec.finding.path',
  findingIp: 'cnirec.finding.ip',
  findingCallId: 'cnirec.finding.call_id',
} as const;

/** Log records' event names (OTLP LogRecord.event_name). */
export const EVENT_NAMES = {
  call: 'cni.call',
  callUpdated: 'cni.call.updated',
  tracer: (kind: string) => `cnirec.tracer.${kind}`,
  finding: (state: 'opened' | 'resolved') => `cnirec.finding.${state}`,
} as const;

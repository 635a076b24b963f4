/**
 * What a call's span and log record both say about it, derived once per
 * call: its name, how it ended, the CNI error it printed, and the
 * attributes common to both. Pure: a stored call in, plain values out.
 */

import { constants } from 'node:os';
import { basename } from 'node:path';
import type { Attributes } from '@opentelemetry/api';
import { withKernelMessage } from '../../collector/index.js';
import type { StoredCall, StoredHelper } from '../../store/index.js';
import { CNI, SEMCONV } from './attribute-names.js';
import { cniErrorOf, networkConfigFacts, type CniError } from './cni-json.js';

export type CallOutcome =
  | { readonly kind: 'ok' }
  | { readonly kind: 'failed'; readonly message: string; readonly errorType: string }
  | { readonly kind: 'incomplete'; readonly reason: string };

export interface CallFacts {
  /** `CNI ADD bridge`. */
  readonly spanName: string;
  readonly outcome: CallOutcome;
  readonly cniError: CniError | null;
  /** µs since the epoch; for an incomplete call, the last thing seen of it (its start at the least). */
  readonly endUs: number;
  readonly endKnown: boolean;
  readonly attributes: Attributes;
}

const SIGNAL_NAMES: ReadonlyMap<number, string> = new Map(Object.entries(constants.signals).map(([name, n]) => [n, name]));

export const signalName = (n: number): string => SIGNAL_NAMES.get(n) ?? `signal ${n}`;

export function callFacts(call: StoredCall): CallFacts {
  const cniError = call.exitCode !== null && call.exitCode !== 0 ? cniErrorOf(call.stdout.bytes) : null;
  const config = networkConfigFacts(call.stdin.bytes);
  const endKnown = call.endedAtUs !== null;
  const endUs = call.endedAtUs ?? lastSeenUs(call);
  const outcome = outcomeOf(call, cniError);
  const attributes = callAttributes(call, config, cniError, endKnown);
  if (outcome.kind === 'failed') attributes[SEMCONV.errorType] = outcome.errorType;
  return { spanName: `CNI ${call.command ?? 'exec'} ${call.plugin}`, outcome, cniError, endUs, endKnown, attributes };
}

function outcomeOf(call: StoredCall, cniError: CniError | null): CallOutcome {
  // An incomplete call whose exit was still seen (records lost meanwhile) did succeed or fail.
  if (call.ok === null) return { kind: 'incomplete', reason: call.incompleteReason ?? 'its end was never recorded' };
  if (call.ok) return { kind: 'ok' };
  if (call.signal !== null) {
    const name = signalName(call.signal);
    return { kind: 'failed', message: `killed by ${name}${call.coreDumped ? ' (core dumped)' : ''}`, errorType: name };
  }
  const code = call.exitCode ?? -1;
  // A bare errno text from the plugin reads better with the kernel's own words.
  if (cniError?.msg) return { kind: 'failed', message: withKernelMessage(cniError.msg, call.kernelMessages) ?? cniError.msg, errorType: cniError.code === null ? `exit ${code}` : `cni error ${cniError.code}` };
  const kernel = call.kernelMessages.at(-1)?.message;
  return { kind: 'failed', message: kernel ? `exit code ${code} (kernel: ${kernel})` : `exit code ${code}`, errorType: `exit ${code}` };
}

/** An incomplete call's end was not seen: the latest time anything of it was. */
function lastSeenUs(call: StoredCall): number {
  let last = call.startedAtUs;
  for (const h of call.helpers) last = Math.max(last, h.endedAtUs ?? h.startedAtUs);
  return last;
}

function callAttributes(call: StoredCall, config: ReturnType<typeof networkConfigFacts>, cniError: CniError | null, endKnown: boolean): Attributes {
  const a: Attributes = {
    [CNI.callId]: call.id,
    [CNI.callStatus]: call.status,
    [CNI.plugin]: call.plugin,
    [SEMCONV.processPid]: call.pid,
    [SEMCONV.processParentPid]: call.ppid,
    [SEMCONV.processExecutablePath]: call.path,
    [SEMCONV.processExecutableName]: call.plugin,
    [SEMCONV.processCommandArgs]: [...call.argv],
    [CNI.captureMode]: call.captureMode,
    [CNI.streamBytes('stdin')]: call.stdin.totalBytes,
    [CNI.streamBytes('stdout')]: call.stdout.totalBytes,
    [CNI.streamBytes('stderr')]: call.stderr.totalBytes,
  };
  const put = (key: string, value: string | number | boolean | null | undefined) => {
    if (value !== null && value !== undefined && value !== '') a[key] = value;
  };
  put(CNI.command, call.command);
  put(CNI.ifname, call.ifname);
  put(CNI.netns, call.netns);
  put(CNI.args, call.cniArgs);
  // The stdin's name, else the network the store named the call by (a light-mode call, a STATUS or GC by its conf).
  put(CNI.networkName, config.name ?? call.network);
  put(CNI.cniVersion, config.cniVersion);
  put(SEMCONV.containerId, call.containerId);
  put(SEMCONV.k8sNamespaceName, call.podNamespace);
  put(SEMCONV.k8sPodName, call.podName);
  put(SEMCONV.k8sPodUid, call.podUid);
  put(SEMCONV.processExitCode, call.exitCode);
  if (call.signal !== null) put(CNI.signal, signalName(call.signal));
  if (call.coreDumped) put(CNI.coreDumped, true);
  if (call.isVersionProbe) put(CNI.versionProbe, true);
  if (call.lostRecords) put(CNI.lostRecords, true);
  if (call.lostRecords) put(CNI.lostRecordsCause, call.lostRecordsCause);
  if (call.status === 'incomplete') put(CNI.incompleteReason, call.incompleteReason);
  if (!endKnown) put(CNI.endUnknown, true);
  put(CNI.callerPid, call.parentPid);
  put(CNI.callerName, call.parentComm);
  put(CNI.callerExecutablePath, call.parentExe);
  put(CNI.traceparent, call.traceParent);
  if (cniError) {
    put(CNI.errorCode, cniError.code);
    put(CNI.errorMsg, cniError.msg);
    put(CNI.errorDetails, cniError.details);
  }
  return a;
}

/** `iptables -t nat -A …`: a helper's command line as its span name, shortened for waterfall views. */
export function helperSpanName(h: StoredHelper): string {
  const [first, ...rest] = h.argv.length > 0 ? h.argv : [h.path];
  const line = [basename(first!), ...rest].join(' ');
  return line.length <= MAX_SPAN_NAME ? line : `${line.slice(0, MAX_SPAN_NAME - 1)}…`;
}

const MAX_SPAN_NAME = 120;

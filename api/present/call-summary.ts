/**
 * A call → CallSummary: the one mapping for every list, pod story, call
 * page and tail message. A live call from the collector takes the same road
 * as a stored one: the store's column list gives it the summary it will
 * read back once written (summaryOfCall), so the tail never says anything
 * else about a call than the REST API later does.
 */

import { withKernelMessage, type CniCall } from '../../collector/index.js';
import { isoFromUs } from '../../lib/index.js';
import { summaryOfCall, type StoredCallSummary, type StreamSize } from '../../store/index.js';
import type { CallSummary } from '../schemas/call-summary.js';
import { msFromUs } from './time.js';

const size = (s: StreamSize): CallSummary['payload']['stdin'] => ({ bytes: s.storedBytes, totalBytes: s.totalBytes, truncated: s.truncated });

/** `error`: the failure's message (call-error.ts), shown for a call that failed. */
export function summaryFromStored(c: StoredCallSummary, error: string | null): CallSummary {
  return {
    id: c.id,
    command: c.command,
    plugin: c.plugin,
    path: c.path,
    pid: c.pid,
    ppid: c.ppid,
    parentId: c.parentId,
    // Only a top-level call has a parent process worth naming: a delegated call's is its parent plugin.
    parentProcess: c.parentPid === null || c.parentId !== null ? null : { pid: c.parentPid, comm: c.parentComm, exe: c.parentExe },
    containerId: c.containerId,
    netns: c.netns,
    network: c.network,
    gcDriven: c.gcDriven,
    ifname: c.ifname,
    pod: c.podNamespace !== null && c.podName !== null ? { namespace: c.podNamespace, name: c.podName, uid: c.podUid } : null,
    podInfraContainerId: c.podInfraContainerId,
    traceParent: c.traceParent,
    startedAt: isoFromUs(c.startedAtUs),
    endedAt: c.endedAtUs === null ? null : isoFromUs(c.endedAtUs),
    durationMs: c.durationUs === null ? null : msFromUs(c.durationUs),
    exitCode: c.exitCode,
    signal: c.signal,
    coreDumped: c.coreDumped,
    ok: c.ok,
    status: c.status,
    incomplete: c.status === 'incomplete',
    incompleteReason: c.incompleteReason,
    error: c.ok === false ? withKernelMessage(error, c.kernelMessages) : null,
    isVersionProbe: c.isVersionProbe,
    captureMode: c.captureMode,
    lostRecords: c.lostRecords,
    lostRecordsCause: c.lostRecordsCause,
    stdioShared: c.stdioShared,
    uncapturedIo: c.uncapturedIo,
    payload: { stdin: size(c.stdin), stdout: size(c.stdout), stderr: size(c.stderr) },
    envTruncated: c.envTruncated,
    pathTruncated: c.pathTruncated,
    outputAfterExit: { stdout: c.stdoutAfterExitOffset, stderr: c.stderrAfterExitOffset },
    changeSummary: c.changeSummary,
    kernelMessages: c.kernelMessages.map((m) => ({ at: isoFromUs(m.atUs), pid: m.pid, process: m.process, message: m.message })),
  };
}

/** A call as the collector publishes it (the live tail); `error` as for summaryFromStored. */
export const summaryFromLive = (call: CniCall, error: string | null): CallSummary => summaryFromStored(summaryOfCall(call), error);

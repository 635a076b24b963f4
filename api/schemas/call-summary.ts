/**
 * CallSummary, the shape of a call in every list, pod view and tail message
 * (contract v1: fields may be added, never renamed). Built from a stored row
 * (REST) or from a live collector event (tail) by the two mappers below, so
 * both sides of the API say the same thing.
 */

import { z } from 'zod';
import type { CapturedStream, CniCall } from '../../collector/index.js';
import type { StoredCallSummary, StreamSize } from '../../store/index.js';
import { isoFromUs } from './iso-time.js';

export const podRefSchema = z
  .object({
    namespace: z.string(),
    name: z.string(),
    uid: z.string().nullable(),
  })
  .describe('The pod, from K8S_POD_* in CNI_ARGS');

const streamSizeSchema = z.object({
  bytes: z.number().int().describe('Bytes stored'),
  totalBytes: z.number().int().describe('Bytes the process moved in all'),
  truncated: z.boolean(),
});

export const callSummarySchema = z
  .object({
    id: z.string(),
    command: z.string().nullable().describe('CNI_COMMAND: ADD, DEL, CHECK, VERSION, GC, STATUS'),
    plugin: z.string().describe('The plugin binary name'),
    path: z.string(),
    pid: z.number().int(),
    ppid: z.number().int(),
    parentId: z.string().nullable().describe('The delegating call (bridge for its host-local), null for a runtime call'),
    parentProcess: z
      .object({ pid: z.number().int(), comm: z.string().nullable(), exe: z.string().nullable() })
      .nullable()
      .describe('The runtime process that exec’d a top-level call'),
    containerId: z.string().nullable(),
    netns: z.string().nullable(),
    ifname: z.string().nullable(),
    pod: podRefSchema.nullable(),
    podInfraContainerId: z.string().nullable(),
    traceParent: z.string().nullable(),
    startedAt: z.string().describe('ISO 8601'),
    endedAt: z.string().nullable(),
    durationMs: z.number().nullable(),
    exitCode: z.number().int().nullable(),
    signal: z.number().int().nullable(),
    coreDumped: z.boolean().nullable(),
    ok: z.boolean().nullable().describe('Exit 0 and no signal; null while running or when the end was not seen'),
    status: z.enum(['running', 'finished', 'incomplete']),
    incomplete: z.boolean(),
    incompleteReason: z.string().nullable().describe('Why an incomplete call has no outcome (the tracer restarted, its exit was never seen…)'),
    error: z
      .string()
      .nullable()
      .describe("A failed call's error in one line: the CNI error's msg (and details) from stdout, else the first line of its output; null unless it failed"),
    isVersionProbe: z.boolean(),
    captureMode: z.enum(['full', 'light']),
    lostRecords: z.boolean().describe('The tracer lost records while this call ran: some of its payload, helpers or children may be missing'),
    payload: z.object({ stdin: streamSizeSchema, stdout: streamSizeSchema, stderr: streamSizeSchema }),
  })
  .describe('CallSummary');

export type CallSummary = z.infer<typeof callSummarySchema>;

/** Store microseconds → ISO 8601 (ms precision). */
export const iso = isoFromUs;

function ms(us: number | null): number | null {
  return us === null ? null : Math.round(us) / 1000;
}

function sizeOfStored(s: StreamSize): CallSummary['payload']['stdin'] {
  return { bytes: s.storedBytes, totalBytes: s.totalBytes, truncated: s.truncated };
}

function sizeOfLive(s: CapturedStream): CallSummary['payload']['stdin'] {
  return { bytes: s.bytes.length, totalBytes: s.totalBytes, truncated: s.truncated };
}

/** `error`: the failure's message (api/present/call-error.ts), for a call that failed. */
export function summaryFromStored(c: StoredCallSummary, error: string | null): CallSummary {
  return {
    id: c.id,
    command: c.command,
    plugin: c.plugin,
    path: c.path,
    pid: c.pid,
    ppid: c.ppid,
    parentId: c.parentId,
    parentProcess: c.parentPid === null || c.parentId !== null ? null : { pid: c.parentPid, comm: c.parentComm, exe: c.parentExe },
    containerId: c.containerId,
    netns: c.netns,
    ifname: c.ifname,
    pod: c.podNamespace !== null && c.podName !== null ? { namespace: c.podNamespace, name: c.podName, uid: c.podUid } : null,
    podInfraContainerId: c.podInfraContainerId,
    traceParent: c.traceParent,
    startedAt: iso(c.startedAtUs),
    endedAt: c.endedAtUs === null ? null : iso(c.endedAtUs),
    durationMs: ms(c.durationUs),
    exitCode: c.exitCode,
    signal: c.signal,
    coreDumped: c.coreDumped,
    ok: c.ok,
    status: c.status,
    incomplete: c.status === 'incomplete',
    incompleteReason: c.incompleteReason,
    error: c.ok === false ? error : null,
    isVersionProbe: c.isVersionProbe,
    captureMode: c.captureMode,
    lostRecords: c.lostRecords,
    payload: { stdin: sizeOfStored(c.stdin), stdout: sizeOfStored(c.stdout), stderr: sizeOfStored(c.stderr) },
  };
}

/** `error`: the failure's message (api/present/call-error.ts), for a call that failed. */
export function summaryFromLive(c: CniCall, error: string | null): CallSummary {
  const outcome = c.outcome;
  const ok = outcome ? outcome.exitCode === 0 && outcome.signal === null : null;
  return {
    id: c.id,
    command: c.command,
    plugin: c.plugin,
    path: c.path,
    pid: c.pid,
    ppid: c.ppid,
    parentId: c.parentId,
    parentProcess: c.parentProcess,
    containerId: c.containerId,
    netns: c.netns,
    ifname: c.ifname,
    pod: c.pod ? { namespace: c.pod.namespace, name: c.pod.name, uid: c.pod.uid } : null,
    podInfraContainerId: c.pod?.infraContainerId ?? null,
    traceParent: c.traceParent,
    startedAt: iso(c.startedAtUs),
    endedAt: c.endedAtUs === null ? null : iso(c.endedAtUs),
    durationMs: ms(c.durationUs),
    exitCode: outcome?.exitCode ?? null,
    signal: outcome?.signal ?? null,
    coreDumped: outcome ? outcome.coreDumped : null,
    ok,
    status: c.status,
    incomplete: c.status === 'incomplete',
    incompleteReason: c.incompleteReason,
    error: ok === false ? error : null,
    isVersionProbe: c.isVersionProbe,
    captureMode: c.captureMode,
    lostRecords: c.lostRecords,
    payload: { stdin: sizeOfLive(c.stdin), stdout: sizeOfLive(c.stdout), stderr: sizeOfLive(c.stderr) },
  };
}

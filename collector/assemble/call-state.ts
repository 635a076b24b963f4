/**
 * The assembler's state for one call and its processes, and how it turns
 * into the published CniCall. Pure data and constructors; the assembler
 * decides when.
 */

import { callChanges, keepsStdin, kernelMessages, type HelperRun, type KernelEntry, type NetnsNames } from '../changes/index.js';
import path from 'node:path';
import { podFromCniArgs } from './cni-env.js';
import { EMPTY_STREAM, StreamCapture } from './stream-capture.js';
import type { CaptureMode, ExecFrame } from '../../bpf/index.js';
import type { CniCall, HelperProcess, LostRecordsCause, ParentProcess, ProcessOutcome } from '../types.js';

export type Role = 'plugin' | 'helper' | 'fork';

/** Which of the call's streams an fd of a process stands for: 0 stdin, 1 stdout, 2 stderr. */
export type StdioRole = 0 | 1 | 2;

/** Marks a call lostRecords, keeping the first cause. */
export function markLost(call: CallState, why: LostRecordsCause): void {
  call.lostRecords = true;
  call.lostWhy ??= why;
}

export interface Proc {
  readonly pid: number;
  ppid: number;
  /**
   * The fds that stand for one of the call's streams, once the process has
   * copied fds (dup2(2, 1): fd 1 is stderr's); undefined: fds 0, 1, 2 stand
   * for themselves. Inherited at fork, kept across exec.
   */
  fds?: Map<number, StdioRole>;
  start: string | null;
  callId: string | null;
  role: Role;
  helper: HelperState | null;
  exited: boolean;
  /** When its fork record was dated (kernel µs), for an entry a fork made. */
  forkTs?: number;
  /** When it exited (kernel µs): a fork of this pid dated before is its own fork record, come late. */
  exitTs?: number;
  /** How it ended (its wait status, decoded), kept for an exec whose record comes after the exit's. */
  outcome?: ProcessOutcome;
  /** The tracer run its tree takes its payloads from (null: none, a light-mode tree): its parent's, or that of when its tree started. */
  payloadSrc: number | null;
}

export interface HelperState {
  pid: number;
  ppid: number;
  path: string;
  argv: string[];
  startedAtUs: number;
  endedAtUs: number | null;
  outcome: ProcessOutcome | null;
  stdout: StreamCapture;
  stderr: StreamCapture;
  /** What it read on its own stdin, kept only when that is a change it makes (`nft -f -`'s script); else null. */
  stdin: StreamCapture | null;
}

export interface CallState {
  base: Omit<CniCall, LaterFields>;
  start: string;
  /** Every image the plugin process ran, in order (a wrapper that exec'd the real plugin in place, then it). */
  execChain: string[];
  /** Monotonic µs of each exec seen for the plugin process: a record delivered twice is not a second image. */
  execTimes: number[];
  envTruncated: boolean;
  pathTruncated: boolean;
  /** Monotonic µs of the plugin's exit: what its descendants write after it is output after exit. */
  exitTs: number | null;
  /** The open files of the plugin's fds 0, 1, 2 at exec: a read or write is the call's when it goes to one of them. */
  stdioFiles: readonly [string, string, string];
  stdin: StreamCapture;
  stdout: StreamCapture;
  stderr: StreamCapture;
  helpers: HelperState[];
  pids: Set<number>;
  endedAtUs: number | null;
  outcome: ProcessOutcome | null;
  lostRecords: boolean;
  /** Why lostRecords was first set (counted when the call is published: what an operator tunes against). */
  lostWhy: LostRecordsCause | null;
  /** A write to stdout and stderr's one file went through an fd that stood for neither (see CniCall.stdioShared). */
  stdioAmbiguous: boolean;
  /** Reads/writes on the call's stdio files whose bytes the tracer did not take. */
  uncapturedIo: number;
  finalizeDueMs: number | null;
  incompleteReason: string | null;
  /** What its tree did to the kernel, as the tracer told it: decoded when the call is published (collector/changes). */
  kernel: KernelEntry[];
  /** Which netns inodes are the node's and the pod's (resolved once, when the first kernel record comes). */
  netnsNames: NetnsNames | null;
}

/** What the call's later life sets, not its exec. */
type LaterFields =
  | 'endedAtUs'
  | 'durationUs'
  | 'outcome'
  | 'status'
  | 'incompleteReason'
  | 'lostRecordsCause'
  | 'stdin'
  | 'stdout'
  | 'stderr'
  | 'helpers'
  | 'lostRecords'
  | 'stdioShared'
  | 'execChain'
  | 'envTruncated'
  | 'pathTruncated'
  | 'stdoutAfterExitOffset'
  | 'stderrAfterExitOffset'
  | 'uncapturedIo';

/** What a call's environment says about it: set at its exec, and again when an exec in place brings the real plugin. */
export function identityFromEnv(env: Record<string, string>): Pick<CniCall, 'env' | 'command' | 'containerId' | 'netns' | 'ifname' | 'cniArgs' | 'pod' | 'traceParent' | 'isVersionProbe'> {
  const command = env.CNI_COMMAND ?? null;
  return {
    env,
    command,
    containerId: env.CNI_CONTAINERID || null,
    netns: env.CNI_NETNS || null,
    ifname: env.CNI_IFNAME || null,
    cniArgs: env.CNI_ARGS ?? null,
    pod: podFromCniArgs(env.CNI_ARGS),
    traceParent: env.TRACEPARENT ?? null,
    isVersionProbe: command === 'VERSION',
  };
}

export interface NewCall {
  readonly rec: ExecFrame;
  readonly execPath: string;
  readonly argv: string[];
  readonly env: Record<string, string>;
  readonly parentId: string | null;
  readonly parentProcess: ParentProcess | null;
  readonly startedAtUs: number;
  readonly captureMode: CaptureMode;
  readonly maxStreamBytes: number;
  /** The exec block (argv + env) was cut or lost chunks. */
  readonly envTruncated: boolean;
  /** The executable's path is its beginning only (the tracer's chunks of it were lost). */
  readonly pathTruncated: boolean;
}

export function newCallState(c: NewCall): CallState {
  const { rec, env } = c;
  const identity = identityFromEnv(env);
  return {
    base: {
      id: callId(c.startedAtUs, rec.pid),
      pid: rec.pid,
      processStart: rec.start,
      ppid: rec.ppid,
      parentId: c.parentId,
      parentProcess: c.parentProcess,
      path: c.execPath,
      plugin: pluginName(c.execPath),
      argv: c.argv,
      ...identity,
      startedAtUs: c.startedAtUs,
      captureMode: c.captureMode,
    },
    start: rec.start,
    stdioFiles: rec.stdioFiles,
    execChain: [c.execPath],
    execTimes: [rec.ts],
    envTruncated: c.envTruncated,
    pathTruncated: c.pathTruncated,
    exitTs: null,
    stdin: new StreamCapture(c.maxStreamBytes),
    stdout: new StreamCapture(c.maxStreamBytes),
    stderr: new StreamCapture(c.maxStreamBytes),
    helpers: [],
    pids: new Set(),
    kernel: [],
    netnsNames: null,
    endedAtUs: null,
    outcome: null,
    lostRecords: false,
    lostWhy: null,
    stdioAmbiguous: false,
    uncapturedIo: 0,
    finalizeDueMs: null,
    incompleteReason: null,
  };
}

export function newHelperState(pid: number, ppid: number, execPath: string, argv: string[], startedAtUs: number, maxBytes: number): HelperState {
  return {
    pid,
    ppid,
    path: execPath,
    argv,
    startedAtUs,
    endedAtUs: null,
    outcome: null,
    stdout: new StreamCapture(maxBytes),
    stderr: new StreamCapture(maxBytes),
    stdin: keepsStdin(execPath, argv) ? new StreamCapture(maxBytes) : null,
  };
}

export function snapshotCall(call: CallState): CniCall {
  const b = call.base;
  const ended = call.endedAtUs;
  const full = b.captureMode === 'full';
  const incomplete = call.incompleteReason !== null;
  // Spelled out rather than spread: a spread of this many fields makes V8 build slow dictionary objects.
  return {
    id: b.id,
    pid: b.pid,
    processStart: b.processStart,
    ppid: b.ppid,
    parentId: b.parentId,
    parentProcess: b.parentProcess,
    path: b.path,
    plugin: b.plugin,
    argv: b.argv,
    env: b.env,
    command: b.command,
    containerId: b.containerId,
    netns: b.netns,
    ifname: b.ifname,
    cniArgs: b.cniArgs,
    pod: b.pod,
    traceParent: b.traceParent,
    isVersionProbe: b.isVersionProbe,
    startedAtUs: b.startedAtUs,
    captureMode: b.captureMode,
    stdioShared: call.stdioAmbiguous,
    uncapturedIo: call.uncapturedIo,
    endedAtUs: ended,
    durationUs: ended === null ? null : Math.max(0, ended - b.startedAtUs),
    outcome: call.outcome,
    status: incomplete ? 'incomplete' : ended === null ? 'running' : 'finished',
    incompleteReason: call.incompleteReason,
    lostRecords: call.lostRecords,
    lostRecordsCause: call.lostRecords ? call.lostWhy : null,
    stdin: full ? call.stdin.snapshot() : EMPTY_STREAM,
    stdout: full ? call.stdout.snapshot() : EMPTY_STREAM,
    stderr: full ? call.stderr.snapshot() : EMPTY_STREAM,
    helpers: call.helpers.map(helperSnapshot),
    execChain: [...call.execChain],
    envTruncated: call.envTruncated,
    pathTruncated: call.pathTruncated,
    stdoutAfterExitOffset: full && call.exitTs !== null ? call.stdout.offsetOfFirstAfter(call.exitTs) : null,
    stderrAfterExitOffset: full && call.exitTs !== null ? call.stderr.offsetOfFirstAfter(call.exitTs) : null,
    changes: full ? callChanges(call.kernel, call.helpers.map(helperRun), call.netnsNames ?? { host: null, pod: null, podPath: b.netns }) : null,
    kernelMessages: kernelMessages(call.kernel, (pid) => processName(call, pid)),
  };
}

/** The name of the binary a pid of the call ran: a helper's, else the plugin's (its threads, its forks). */
function processName(call: CallState, pid: number): string {
  const h = call.helpers.find((x) => x.pid === pid);
  const path = h ? h.path : call.base.path;
  return path.slice(path.lastIndexOf('/') + 1);
}

/**
 * stdout and stderr are one open file (a terminal, `2>&1` into one pipe,
 * `>/dev/null 2>&1`): which of the two a write belongs to is then told by
 * the fd it went through, not by the file.
 */
export function stdioShared(files: readonly [string, string, string]): boolean {
  return files[1] !== '0' && files[1] === files[2];
}

/** The stream an fd of the process stands for; undefined: none of them. */
export function roleOf(proc: Proc, fd: number): StdioRole | undefined {
  if (proc.fds) return proc.fds.get(fd);
  return fd === 0 || fd === 1 || fd === 2 ? fd : undefined;
}

/** The process copied `oldFd` to `newFd`: the new fd stands for what the old one did (or for nothing). */
export function copyFd(proc: Proc, oldFd: number, newFd: number): void {
  const role = roleOf(proc, oldFd);
  proc.fds ??= new Map<number, StdioRole>([
    [0, 0],
    [1, 1],
    [2, 2],
  ]);
  if (role === undefined) proc.fds.delete(newFd);
  else proc.fds.set(newFd, role);
}

function helperSnapshot(h: HelperState): HelperProcess {
  return {
    pid: h.pid,
    ppid: h.ppid,
    path: h.path,
    argv: h.argv,
    startedAtUs: h.startedAtUs,
    endedAtUs: h.endedAtUs,
    outcome: h.outcome,
    stdout: h.stdout.snapshot(),
    stderr: h.stderr.snapshot(),
  };
}

/** A helper as the change decoders read it: with its stdin, where that was kept (not published: its changes are). */
function helperRun(h: HelperState): HelperRun {
  const snapshot = helperSnapshot(h);
  return h.stdin ? { ...snapshot, stdin: h.stdin.snapshot() } : snapshot;
}

/** The binary's name: `bridge`, `host-local`… */
export function pluginName(execPath: string): string {
  return path.posix.basename(execPath);
}

/** Sortable by start time, unique per process exec: `<epoch µs base36>-<pid base36>`. */
export function callId(startedAtUs: number, pid: number): string {
  return `${Math.floor(startedAtUs).toString(36).padStart(11, '0')}-${pid.toString(36)}`;
}

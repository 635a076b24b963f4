/**
 * Turns tracer records into CNI calls: exec → stdin/stdout/stderr → exit,
 * with delegated plugin calls linked to their parent call and helper
 * processes to the call they work for. Pure: no I/O, no clock of its own
 * (callers pass `nowMs`), so it can be replayed from recorded tracer output.
 */

import { callId, foreignProc, newCallState, newHelperState, snapshotCall, type CallState, type HelperState, type Proc } from './call-state.js';
import { ChunkedBuffer } from './chunked-buffer.js';
import { isInCniPath } from './cni-env.js';
import { decodeExecBlock, newExecBlock } from './exec-block.js';
import { decodeWaitStatus } from './wait-status.js';
import type { StreamCapture } from './stream-capture.js';
import { shimParentFor } from './socket-shims.js';
import { PAYLOAD_CAP_BYTES, type CaptureMode, type TracerRecord } from '../../bpf/index.js';
import type { CollectorEvent, ParentProcess } from '../types.js';

export { callId } from './call-state.js';

/** Env value of CNI_COMMAND that marks the collector's own readiness probe, never a call. */
export const CANARY_COMMAND = '__cnirec_canary__';

export interface AssemblerOptions {
  /** Kernel monotonic µs to Unix epoch µs. */
  monoToEpochUs(monoUs: number): number;
  /** Names the untraced process that exec'd a top-level plugin (a port: reads /proc in the daemon). */
  describeParent?(pid: number): ParentProcess | null;
  /** How long to wait after a plugin's exit for records its other CPUs delivered late. */
  finalizeGraceMs?: number;
  /** Per call stream; beyond it bytes are dropped and the stream marked truncated. */
  maxStreamBytes?: number;
  /** Per helper stream. */
  maxHelperStreamBytes?: number;
  captureMode?: CaptureMode;
  /**
   * Whether a top-level plugin exec (its parent untraced here) becomes a call.
   * While two tracers overlap (a capture mode switch), the new one turns away
   * processes the old one already follows.
   */
  admitTopLevel?(ppid: number): boolean;
  /** Processes another tracer run follows: they and their descendants are left to it. */
  foreignPids?: Iterable<number>;
  /** Whether an exec is the collector's own canary, known by its pid (a port: see collector/tracer/canary.ts). */
  isOwnCanary?(pid: number, ppid: number): boolean;
}

export interface AssemblerCounters {
  records: number;
  lostEvents: number;
  orphanChunks: number;
  callsStarted: number;
  callsFinished: number;
  canaries: number;
  /** Exec records seen twice (same pid and start time to the µs): the repeat is ignored. */
  duplicateExecs: number;
}

export interface AssemblerHeldState {
  /** Processes followed (live, or exited but part of a call still open). */
  readonly procs: number;
  /** Calls not yet published as finished. */
  readonly calls: number;
  /** Exec records waiting for the rest of their argv/env chunks. */
  readonly pendingExecs: number;
  /** Reads/writes waiting for the rest of their payload chunks. */
  readonly ioInFlight: number;
  /** Records waiting for the exec or fork of their process. */
  readonly earlyRecords: number;
}

interface PendingExec {
  /** When it arrived (the caller's clock). */
  since: number;
  record: Extract<TracerRecord, { kind: 'exec' }>;
  block: ChunkedBuffer;
  parentComm: string | null;
}

interface EarlyRecords {
  since: number;
  ios: IoInFlight[];
  forks: number[];
  exit: Extract<TracerRecord, { kind: 'exit' }> | null;
}

/** How long records may wait for the exec or fork of their process. */
const EARLY_RECORDS_TTL_MS = 10_000;
/**
 * How long an exec or a read/write may wait for chunks it has not got. They
 * are printed right after their header, so one still incomplete by then lost
 * its chunks (lost records, a bpftrace restart) and goes on with what it has
 * rather than being held for good.
 */
const CHUNKS_TTL_MS = 10_000;
/**
 * How long a helper still running when its call was published stays
 * followed. Its records change nothing published any more; it is kept only
 * so that what it runs next is not taken for a runtime's call. Past this
 * (its exit lost, or a daemon it became) it is forgotten.
 */
const OUTLIVED_TTL_MS = 60_000;
/** Ids of published calls remembered, so an exec record seen again after its call ended is not a second call. */
const RECENT_IDS = 4096;

interface IoInFlight {
  /** When its header arrived (the caller's clock). */
  since: number;
  pid: number;
  kind: 'read' | 'write';
  fd: 0 | 1 | 2;
  inode: string;
  ts: number;
  buf: ChunkedBuffer;
}

export class CallAssembler {
  readonly counters: AssemblerCounters = {
    records: 0,
    lostEvents: 0,
    orphanChunks: 0,
    callsStarted: 0,
    callsFinished: 0,
    canaries: 0,
    duplicateExecs: 0,
  };
  private readonly procs = new Map<number, Proc>();
  private readonly calls = new Map<string, CallState>();
  private readonly pendingExecs = new Map<number, PendingExec>();
  private readonly ioByTid = new Map<number, IoInFlight>();
  /** Ids of the last calls finished, oldest first (a Set keeps insertion order). */
  private readonly recentIds = new Set<string>();
  /** Helpers that outlived their call's publication, and since when. */
  private readonly outlived = new Map<number, { proc: Proc; since: number }>();
  private seq = 0;
  private acceptsNewCalls = true;
  private now = 0;
  /**
   * Records about a process whose exec (or fork) has not arrived yet: another
   * CPU's buffer can deliver a process's reads, writes, forks or exit before
   * its exec. They wait here, per pid, for a while.
   */
  private readonly early = new Map<number, EarlyRecords>();
  private mode: CaptureMode;
  private readonly graceMs: number;
  private readonly maxStreamBytes: number;
  private readonly maxHelperStreamBytes: number;

  constructor(private readonly opts: AssemblerOptions) {
    this.mode = opts.captureMode ?? 'full';
    this.graceMs = opts.finalizeGraceMs ?? 250;
    this.maxStreamBytes = opts.maxStreamBytes ?? 4 * 1024 * 1024;
    this.maxHelperStreamBytes = opts.maxHelperStreamBytes ?? 64 * 1024;
    for (const pid of opts.foreignPids ?? []) this.procs.set(pid, foreignProc(pid, 0));
  }

  /** Feeds one record; returns the events it completes. */
  push(rec: TracerRecord, nowMs: number): CollectorEvent[] {
    this.now = nowMs;
    this.counters.records++;
    const events: CollectorEvent[] = [];
    switch (rec.kind) {
      case 'hello':
        this.mode = rec.mode;
        break;
      case 'exec':
        this.flushPendingExec(rec.pid, events);
        this.pendingExecs.set(rec.pid, { since: nowMs, record: rec, block: newExecBlock(rec.blockBytes), parentComm: null });
        this.completeExecIfWhole(rec.pid, events);
        break;
      case 'exec-chunk': {
        const pending = this.pendingExecs.get(rec.pid);
        if (!pending) {
          this.counters.orphanChunks++;
          break;
        }
        pending.block.add(rec.off, rec.data);
        this.completeExecIfWhole(rec.pid, events);
        break;
      }
      case 'exec-parent': {
        const pending = this.pendingExecs.get(rec.pid);
        if (pending) pending.parentComm = rec.comm;
        break;
      }
      case 'fork':
        this.flushPendingExec(rec.ppid, events);
        this.onFork(rec.ppid, rec.pid);
        break;
      case 'read':
      case 'write': {
        this.flushPendingExec(rec.pid, events);
        this.commitIo(rec.tid);
        const fd = rec.kind === 'read' ? 0 : rec.fd;
        const io: IoInFlight = {
          since: nowMs,
          pid: rec.pid,
          kind: rec.kind,
          fd,
          inode: rec.inode,
          ts: rec.ts,
          buf: new ChunkedBuffer(rec.len, PAYLOAD_CAP_BYTES),
        };
        this.ioByTid.set(rec.tid, io);
        // Nothing to wait for (a zero-length read at end of file): no chunk will come to complete it.
        if (io.buf.complete()) this.commitIo(rec.tid);
        break;
      }
      case 'data-chunk': {
        const io = this.ioByTid.get(rec.tid);
        if (!io) {
          this.counters.orphanChunks++;
          break;
        }
        io.buf.add(rec.off, rec.data);
        if (io.buf.complete()) this.commitIo(rec.tid);
        break;
      }
      case 'exit':
        this.flushPendingExec(rec.pid, events);
        this.onExit(rec, nowMs);
        break;
      case 'thread-exit': {
        // Its last chunks may still come through another CPU's buffer: wait for them (or the finalize).
        if (this.ioByTid.get(rec.tid)?.buf.complete()) this.commitIo(rec.tid);
        // A clone() of a thread looks like a fork to the tracer; drop that phantom.
        const proc = this.procs.get(rec.tid);
        if (proc && proc.role === 'fork' && proc.start === null) this.procs.delete(rec.tid);
        break;
      }
      case 'lost':
        this.counters.lostEvents += rec.count;
        for (const call of this.calls.values()) call.lostRecords = true;
        break;
      case 'noise':
        break;
    }
    return events;
  }

  /** Finalizes calls whose grace period after exit has passed. */
  tick(nowMs: number): CollectorEvent[] {
    this.now = Math.max(this.now, nowMs);
    const events: CollectorEvent[] = [];
    for (const [pid, pending] of this.pendingExecs) {
      if (nowMs - pending.since >= CHUNKS_TTL_MS) this.flushPendingExec(pid, events);
    }
    for (const [tid, io] of this.ioByTid) {
      if (nowMs - io.since < CHUNKS_TTL_MS) continue;
      if (this.procs.has(io.pid)) {
        this.commitIo(tid);
      } else {
        this.ioByTid.delete(tid);
        this.counters.orphanChunks++;
      }
    }
    for (const [pid, o] of this.outlived) {
      if (nowMs - o.since < OUTLIVED_TTL_MS) continue;
      this.outlived.delete(pid);
      if (this.procs.get(pid) === o.proc) this.procs.delete(pid);
    }
    for (const [pid, early] of this.early) {
      if (nowMs - early.since < EARLY_RECORDS_TTL_MS) continue;
      this.early.delete(pid);
      this.counters.orphanChunks += early.ios.length + early.forks.length + (early.exit ? 1 : 0);
    }
    for (const [id, call] of this.calls) {
      if (call.finalizeDueMs !== null && call.finalizeDueMs <= nowMs) events.push(this.finalize(id, call));
    }
    return events;
  }

  /** The daemon found a traced plugin process gone without its exit record (lost, or tracer restarted). */
  processGone(pid: number, start: string, reason: string): CollectorEvent[] {
    for (const [id, call] of this.calls) {
      if (call.base.pid === pid && call.start === start && call.endedAtUs === null) {
        call.incompleteReason = reason;
        return [this.finalize(id, call)];
      }
    }
    return [];
  }

  /** Ends every open call, e.g. when the tracer stops: those still running become incomplete. */
  flushAll(reason: string): CollectorEvent[] {
    const events: CollectorEvent[] = [];
    for (const pid of [...this.pendingExecs.keys()]) this.flushPendingExec(pid, events);
    for (const [id, call] of this.calls) {
      if (call.endedAtUs === null) call.incompleteReason = reason;
      events.push(this.finalize(id, call));
    }
    this.procs.clear();
    this.outlived.clear();
    this.ioByTid.clear();
    return events;
  }

  /** Running plugin processes, for the daemon's liveness sweep. */
  runningCalls(): Array<{ id: string; pid: number; start: string; startedAtUs: number }> {
    const out = [];
    for (const [id, call] of this.calls) {
      if (call.endedAtUs === null) out.push({ id, pid: call.base.pid, start: call.start, startedAtUs: call.base.startedAtUs });
    }
    return out;
  }

  get openCallCount(): number {
    return this.calls.size;
  }

  /** How much state the assembler holds now: what must not grow without bound, whatever the tracer sends. */
  heldState(): AssemblerHeldState {
    let earlyRecords = 0;
    for (const e of this.early.values()) earlyRecords += e.ios.length + e.forks.length + (e.exit ? 1 : 0);
    return {
      procs: this.procs.size,
      calls: this.calls.size,
      pendingExecs: this.pendingExecs.size,
      ioInFlight: this.ioByTid.size,
      earlyRecords,
    };
  }

  /** Marks the call `pid` works for as having lost records (the tracer that captured its payloads died under it). */
  markLostRecords(pid: number): void {
    const callId = this.procs.get(pid)?.callId;
    const call = callId ? this.calls.get(callId) : undefined;
    if (call) call.lostRecords = true;
  }

  /** From now on only the calls already started are followed (another tracer takes the new ones). */
  closeToNewCalls(): void {
    this.acceptsNewCalls = false;
  }

  /** Every live process this assembler follows. */
  livePids(): number[] {
    const out: number[] = [];
    for (const proc of this.procs.values()) if (!proc.exited && proc.role !== 'foreign') out.push(proc.pid);
    return out;
  }

  /** Whether a live traced process has this pid. */
  knowsProcess(pid: number): boolean {
    const proc = this.procs.get(pid);
    return proc !== undefined && !proc.exited;
  }

  private completeExecIfWhole(pid: number, events: CollectorEvent[]): void {
    const pending = this.pendingExecs.get(pid);
    if (pending && pending.block.complete()) this.flushPendingExec(pid, events);
  }

  /** Completes an exec record, with whatever chunks arrived. */
  private flushPendingExec(pid: number, events: CollectorEvent[]): void {
    const pending = this.pendingExecs.get(pid);
    if (!pending) return;
    this.pendingExecs.delete(pid);
    const rec = pending.record;
    const decoded = decodeExecBlock(pending.block, rec.argBytes);
    if (decoded.env.CNI_COMMAND === CANARY_COMMAND) {
      this.counters.canaries++;
      this.early.delete(rec.pid);
      return;
    }
    if (this.opts.isOwnCanary?.(rec.pid, rec.ppid)) {
      // Our canary seen without its environment (bpftrace still attaching its probes): no call, and no proof of recording.
      this.early.delete(rec.pid);
      return;
    }
    let existing = this.procs.get(rec.pid);
    if (existing && existing.role !== 'foreign' && existing.start === null && existing.ppid !== rec.ppid) {
      // A stale fork entry (a thread's clone whose end was not seen) under a pid now used by another process.
      this.procs.delete(rec.pid);
      existing = undefined;
    }
    if (existing && existing.start !== null && existing.start !== rec.start) {
      // The pid was reused and the old process's exit never arrived.
      this.retire(existing, 'the process exit was not seen (pid reused)', events);
      existing = undefined;
    }
    const parent = existing ?? this.procs.get(rec.ppid);
    if (parent?.role === 'foreign') {
      this.procs.set(rec.pid, foreignProc(rec.pid, rec.ppid));
      this.early.delete(rec.pid);
      return;
    }
    const parentCallId = parent?.callId ?? null;
    if (parentCallId === null && (!this.acceptsNewCalls || (this.opts.admitTopLevel && !this.opts.admitTopLevel(rec.ppid)))) return;
    const startedAtUs = this.opts.monoToEpochUs(rec.ts);
    const execPath = rec.path || decoded.argv[0] || '';
    const isPlugin = parentCallId === null || !this.calls.has(parentCallId) || isInCniPath(execPath, decoded.env.CNI_PATH);
    const id = callId(startedAtUs, rec.pid);
    if (isPlugin && (this.calls.has(id) || this.recentIds.has(id))) {
      // The same exec again (a record delivered twice): one call, not a second one that replaces the first.
      this.counters.duplicateExecs++;
      return;
    }
    if (existing?.role === 'plugin' && existing.callId && this.calls.has(existing.callId) && !isPlugin) {
      // A plugin process exec'd another program in place: note it as a helper step of the same call.
      this.calls.get(existing.callId)!.helpers.push(this.newHelper(rec.pid, rec.ppid, execPath, decoded.argv, startedAtUs));
      existing.start = rec.start;
      this.replayEarly(rec.pid, rec.ts, rec.start);
      return;
    }
    const proc: Proc = existing ?? { pid: rec.pid, ppid: rec.ppid, start: null, callId: null, role: 'fork', helper: null, exited: false };
    proc.start = rec.start;
    proc.ppid = rec.ppid;
    this.procs.set(rec.pid, proc);
    if (isPlugin) {
      // Not exec'd by a call: maybe a delegate of a shim that asked a daemon to run it (Multus thick mode).
      const parentId = parentCallId ?? shimParentFor(this.calls.values(), { containerId: decoded.env.CNI_CONTAINERID, ppid: rec.ppid, startedAtUs });
      const call = this.newCall(rec, execPath, decoded.argv, decoded.env, parentId, parentCallId === null, startedAtUs, pending.parentComm);
      proc.role = 'plugin';
      proc.callId = call.base.id;
      proc.helper = null;
      call.pids.add(rec.pid);
      this.calls.set(call.base.id, call);
      this.counters.callsStarted++;
      events.push({ type: 'call.started', call: snapshotCall(call) });
    } else {
      const helper = this.newHelper(rec.pid, rec.ppid, execPath, decoded.argv, startedAtUs);
      const call = this.calls.get(parentCallId!)!;
      call.helpers.push(helper);
      call.pids.add(rec.pid);
      proc.role = 'helper';
      proc.callId = parentCallId;
      proc.helper = helper;
    }
    this.replayEarly(rec.pid, rec.ts, rec.start);
  }

  private newCall(
    rec: Extract<TracerRecord, { kind: 'exec' }>,
    execPath: string,
    argv: string[],
    env: Record<string, string>,
    parentId: string | null,
    /** Its parent process is no call: name that process (a runtime, or the daemon of a shim). */
    describeParentProcess: boolean,
    startedAtUs: number,
    parentComm: string | null,
  ): CallState {
    let parentProcess: ParentProcess | null = null;
    if (describeParentProcess) {
      // The tracer's name for the parent is the one from exec time; /proc only adds the executable, if still there.
      const seen = this.opts.describeParent?.(rec.ppid);
      parentProcess = { pid: rec.ppid, comm: parentComm ?? seen?.comm ?? null, exe: seen?.exe ?? null };
    }
    return newCallState({ rec, execPath, argv, env, parentId, parentProcess, startedAtUs, captureMode: this.mode, maxStreamBytes: this.maxStreamBytes });
  }

  private newHelper(pid: number, ppid: number, execPath: string, argv: string[], startedAtUs: number): HelperState {
    return newHelperState(pid, ppid, execPath, argv, startedAtUs, this.maxHelperStreamBytes);
  }

  private earlyFor(pid: number): EarlyRecords {
    let early = this.early.get(pid);
    if (!early) {
      early = { since: this.now, ios: [], forks: [], exit: null };
      this.early.set(pid, early);
    }
    return early;
  }

  /** The process is known now: what arrived before its exec or fork applies to it. */
  private replayEarly(pid: number, execTs: number | null, start: string | null): void {
    const early = this.early.get(pid);
    if (!early) return;
    this.early.delete(pid);
    for (const child of early.forks) this.onFork(pid, child);
    for (const io of early.ios) {
      if (execTs === null || io.ts >= execTs) this.fileIo(io);
      else this.counters.orphanChunks++;
    }
    if (early.exit && (start === null || early.exit.start === start)) this.onExit(early.exit, this.now);
  }

  private onFork(ppid: number, pid: number): void {
    const parent = this.procs.get(ppid);
    if (!parent) {
      this.earlyFor(ppid).forks.push(pid);
      return;
    }
    const existing = this.procs.get(pid);
    // The child's exec may have been delivered first (another CPU's buffer); keep what it said.
    if (existing && !existing.exited) return;
    if (parent.role === 'foreign') {
      this.procs.set(pid, foreignProc(pid, ppid));
      return;
    }
    this.procs.set(pid, { pid, ppid, start: null, callId: parent.callId, role: 'fork', helper: null, exited: false });
    if (parent.callId) this.calls.get(parent.callId)?.pids.add(pid);
    this.replayEarly(pid, null, null);
  }

  private onExit(rec: Extract<TracerRecord, { kind: 'exit' }>, nowMs: number): void {
    // An incomplete read/write stays open: its last chunks may come after the exit (another CPU's buffer).
    for (const [tid, io] of this.ioByTid) if (io.pid === rec.pid && io.buf.complete()) this.commitIo(tid);
    const proc = this.procs.get(rec.pid);
    if (!proc) {
      this.earlyFor(rec.pid).exit = rec;
      return;
    }
    if (proc.role === 'foreign') {
      this.procs.delete(rec.pid);
      return;
    }
    if (proc.start !== null && proc.start !== rec.start) return;
    proc.start = rec.start;
    proc.exited = true;
    const endedAtUs = this.opts.monoToEpochUs(rec.ts);
    const outcome = decodeWaitStatus(rec.exitCode, rec.groupExitCode, rec.signalFlags);
    if (proc.role === 'helper' && proc.helper) {
      proc.helper.endedAtUs = endedAtUs;
      proc.helper.outcome = outcome;
    }
    if (proc.role === 'plugin' && proc.callId) {
      const call = this.calls.get(proc.callId);
      if (call && call.base.pid === rec.pid && call.endedAtUs === null) {
        call.endedAtUs = endedAtUs;
        call.outcome = outcome;
        call.finalizeDueMs = nowMs + this.graceMs;
      }
    }
    // A helper or fork that outlived its call's publication: nothing will ever clear it but this.
    if (proc.callId === null || !this.calls.has(proc.callId)) {
      this.procs.delete(rec.pid);
      this.outlived.delete(rec.pid);
    }
  }

  /** Moves a finished read/write into the stream it belongs to. */
  private commitIo(tid: number): void {
    const io = this.ioByTid.get(tid);
    if (!io) return;
    this.ioByTid.delete(tid);
    this.fileIo(io);
  }

  private fileIo(io: IoInFlight): void {
    const proc = this.procs.get(io.pid);
    if (!proc) {
      this.earlyFor(io.pid).ios.push(io);
      return;
    }
    if (proc.role === 'foreign') return;
    const call = proc.callId ? this.calls.get(proc.callId) : undefined;
    if (!call) {
      this.counters.orphanChunks++;
      return;
    }
    const isMain = proc.role === 'plugin' && call.base.pid === proc.pid;
    const stream = this.streamFor(call, proc, io, isMain);
    stream?.add(io.ts, this.seq++, io.buf.bytes(), io.buf.length, io.buf.complete());
  }

  private streamFor(call: CallState, proc: Proc, io: IoInFlight, isMain: boolean): StreamCapture | null {
    // Helpers and subshells share the plugin's pipes, and a shell redirects its own fds
    // (`>&2`, `< file`): the inode tells whose stream it is, for the plugin process too.
    const callStreams = [call.stdin, call.stdout, call.stderr] as const;
    if (io.inode === call.stdioInodes[io.fd]) return callStreams[io.fd];
    if (io.kind === 'write') {
      const other = io.fd === 1 ? 2 : 1;
      if (io.inode === call.stdioInodes[other]) return callStreams[other];
    }
    // The exec saw no file on that fd (inode 0): the plugin's own fd is all there is to go by.
    if (isMain && call.stdioInodes[io.fd] === '0') return callStreams[io.fd];
    if (proc.role === 'helper' && proc.helper && io.kind === 'write') {
      return io.fd === 1 ? proc.helper.stdout : proc.helper.stderr;
    }
    return null;
  }

  private retire(proc: Proc, reason: string, events: CollectorEvent[]): void {
    this.procs.delete(proc.pid);
    if (proc.role !== 'plugin' || !proc.callId) return;
    const call = this.calls.get(proc.callId);
    if (call && call.base.pid === proc.pid && call.endedAtUs === null) {
      call.incompleteReason = reason;
      events.push(this.finalize(proc.callId, call));
    }
  }

  private finalize(id: string, call: CallState): CollectorEvent {
    for (const [tid, io] of this.ioByTid) if (call.pids.has(io.pid)) this.commitIo(tid);
    this.calls.delete(id);
    this.recentIds.add(id);
    if (this.recentIds.size > RECENT_IDS) this.recentIds.delete(this.recentIds.values().next().value!);
    for (const pid of call.pids) {
      const proc = this.procs.get(pid);
      if (proc?.callId !== id) continue;
      if (proc.exited || proc.role === 'fork' || proc.pid === call.base.pid) this.procs.delete(pid);
      else this.outlived.set(pid, { proc, since: this.now });
    }
    this.counters.callsFinished++;
    return { type: 'call.finished', call: snapshotCall(call) };
  }
}

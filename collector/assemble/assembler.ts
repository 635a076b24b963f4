/**
 * Turns tracer records into CNI calls: exec → stdin/stdout/stderr → exit,
 * with delegated plugin calls linked to their parent call and helper
 * processes to the call they work for. Pure: no I/O, no clock of its own
 * (callers pass `nowMs`), so it can be replayed from recorded tracer output.
 */

import { PidIndex } from './pid-index.js';
import { callId, copyFd, identityFromEnv, markLost, newCallState, newHelperState, pluginName, snapshotCall, type CallState, type HelperState, type Proc } from './call-state.js';
import { ChunkedBuffer } from './chunked-buffer.js';
import { isInCniPath } from './cni-env.js';
import { decodeExecBlock, newExecBlock, type DecodedExecBlock } from './exec-block.js';
import { IoTally } from './io-tally.js';
import { ExecPathParts, resolveExecPath } from './exec-path.js';
import { decodeWaitStatus } from './wait-status.js';
import { LossWindows, overlaps, type LossWindow } from './loss-windows.js';
import { publicationOrder } from './publication.js';
import { streamFor } from './stream-routing.js';
import { SOCKET_SHIM_PLUGINS, shimParentFor } from './socket-shims.js';
import { PAYLOAD_CAP_BYTES, TID_SPACE, isKernelRecord, type CaptureMode, type KernelRecord, type TracerRecord } from '../../bpf/index.js';
import type { CollectorEvent, LostRecordsCause, ParentProcess } from '../types.js';

export { callId } from './call-state.js';
export type { LossWindow } from './loss-windows.js';

/** Env value of CNI_COMMAND that marks the collector's own readiness probe, never a call. */
export const CANARY_COMMAND = '__cnirec_canary__';
/** What the canary writes to its stdout (one write): the known payload full mode's probes must see. */
export const CANARY_OUTPUT = 'cnirec-canary-payload\n';
/** Canary processes remembered (their exec seen, their exit not yet): a bound, should exits be lost. */
const CANARY_PIDS_MAX = 64;

export interface AssemblerOptions {
  /** Kernel monotonic µs to Unix epoch µs. */
  monoToEpochUs(monoUs: number): number;
  /** Names the untraced process that exec'd a top-level plugin (a port: reads /proc in the daemon). */
  describeParent?(pid: number): ParentProcess | null;
  /**
   * How long to wait after a plugin's exit before it is published, on top of
   * what is known to be outstanding (payload records its exit announced,
   * descendants not seen to end). 0 by default: the sequencer hands the exit
   * on only once nothing older can still come from any CPU.
   */
  finalizeGraceMs?: number;
  /** Per call stream; beyond it bytes are dropped and the stream marked truncated. */
  maxStreamBytes?: number;
  /** Per helper stream. */
  maxHelperStreamBytes?: number;
  captureMode?: CaptureMode;
  /** The node's own netns inode (the daemon's /proc/self/ns/net): changes there read `host`. */
  hostNetnsInode?: string | null;
  /** The inode of a netns path (a port: stat in the daemon), so a pod's changes read with its CNI_NETNS. */
  netnsInodeOf?(path: string): string | null;
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
  /** Canary writes seen with exactly CANARY_OUTPUT: full mode's payload probes read the right bytes. */
  canaryPayloads: number;
  /** Canary writes seen with other bytes or another length: the payload probes misread. */
  canaryPayloadMismatches: number;
  /** Exec records seen twice (same pid and start time to the µs): the repeat is ignored. */
  duplicateExecs: number;
  /** Calls published marked lostRecords, by the first cause. */
  callsMarked: Record<LostRecordsCause, number>;
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
  /** Its path whole (N lines) and, for a relative one, its working directory (C lines). */
  path: ExecPathParts;
}

/** What an exec ran: its absolute path where the tracer told enough, and whether that path is cut. */
interface ExecImage {
  execPath: string;
  pathCut: boolean;
}

interface EarlyRecords {
  since: number;
  ios: IoInFlight[];
  /** With their times: a fork replayed after its child exec'd and exited must still be told from a new process. */
  forks: Array<{ pid: number; ts: number | undefined }>;
  exit: Extract<TracerRecord, { kind: 'exit' }> | null;
  /** Its threads' ends, with the payload records they printed (added to its count). */
  threadEnds: Array<{ tid: number; ts: number; ioRecords: number }>;
}

/** How long records may wait for the exec or fork of their process. */
const EARLY_RECORDS_TTL_MS = 10_000;
/** How long an exec waits for the exec of its traced parent (well within EARLY_RECORDS_TTL_MS: its records wait meanwhile). */
const PARENT_WAIT_MS = 5_000;
/**
 * How long (kernel µs) after its process's exit a thread's end may be dated:
 * a thread that dropped the process's live count before the last one may
 * reach its exit probe after that one printed the exit.
 */
const THREAD_END_AFTER_EXIT_US = 10_000;
/** Reads and writes kept per forked process for an exec that may still come (a bound: a fork that never execs). */
const BEFORE_EXEC_MAX = 256;
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
/**
 * How long (ms) a loss is remembered, and a published call kept to be marked
 * by one: well past the longest a record lags behind (a loss is reported
 * when its CPU buffer is read, which is when the records around it arrive).
 */
const LOSS_MEMORY_MS = 60_000;
/** Ids of published calls remembered, so an exec record seen again after its call ended is not a second call. */
const RECENT_IDS = 4096;

interface IoInFlight {
  /** When its header arrived (the caller's clock). */
  since: number;
  pid: number;
  tid: number;
  kind: 'read' | 'write';
  fd: number;
  /** The open file it went to (see the protocol). */
  file: string;
  ts: number;
  buf: ChunkedBuffer;
  /** A U record: bytes that went by without being taken. */
  uncaptured?: boolean;
}

export class CallAssembler {
  readonly counters: AssemblerCounters = {
    records: 0,
    lostEvents: 0,
    orphanChunks: 0,
    callsStarted: 0,
    callsFinished: 0,
    canaries: 0,
    canaryPayloads: 0,
    canaryPayloadMismatches: 0,
    duplicateExecs: 0,
    callsMarked: { 'tracer-lost': 0, 'payload-tracer-cut': 0, 'payloads-never-came': 0, 'early-overflow': 0, 'out-of-order': 0 },
  };
  /** Canary processes whose exec was seen: their write is checked, not filed. */
  private readonly canaryPids = new Set<number>();
  private readonly procs = new Map<number, Proc>();
  private readonly calls = new Map<string, CallState>();
  /** The open calls of socket shims, apart: every new top-level call looks for its shim among them, not among all calls. */
  private readonly shimCalls = new Map<string, CallState>();
  /** Execs waiting for their chunks, by pid and CPU (execKey): another exec of the pid on another CPU may come between them. */
  private readonly pendingExecs = new Map<number, PendingExec>();
  /** Reads/writes waiting for their chunks, by thread and CPU (ioKey): a thread's next one may come between them. */
  private readonly ioByTid = new Map<number, IoInFlight>();
  /** Each process's payload records against the count its exit announced. */
  private readonly ioTally = new IoTally<Proc>();
  /** Processes marked lostRecords before their exec came, and when (see markLostRecords). */
  private readonly lostBeforeExec = new Map<number, { at: number; why: LostRecordsCause }>();
  /** Ids of the last calls finished, oldest first (a Set keeps insertion order). */
  private readonly recentIds = new Set<string>();
  /** Helpers and forks that outlived their call's publication, and since when. */
  private readonly outlived = new Map<number, { proc: Proc; since: number }>();
  /**
   * Calls published while descendants of their plugin still ran (a daemon it
   * started, `( sleep 3; echo late >&2 ) &`). What those do next (helpers,
   * their exits, output after the plugin's exit) still belongs to the call,
   * which is published again, once, when the last of them ends (or after
   * OUTLIVED_TTL_MS). `changed`: something new to publish.
   */
  private readonly lingering = new Map<string, { call: CallState; since: number; changed: boolean }>();
  private seq = 0;
  /** The call of each netlink request in flight, by its tid and ts: its M chunks carry no pid. */
  private readonly netlinkCalls = new Map<string, CallState>();
  private now = 0;
  /** Spans of kernel time (µs) in which a tracer lost records, remembered for a while (see recordsLost). */
  private readonly lossWindows = new LossWindows();
  /** Calls published lately: a loss reported after their publication still marks them (published again). */
  private readonly recentlyPublished = new Map<string, { call: CallState; atMs: number }>();
  /** recentlyPublished by plugin pid (lateChildOf), and the top-level calls, open or recently published, by their ppid (adoptEarlyCalls). */
  private readonly publishedByPid = new PidIndex();
  private readonly topLevelByPpid = new PidIndex();
  /** The exited processes of calls published lately, by pid: a read or write of theirs that comes late still goes in (fileLate). */
  private readonly publishedProcs = new Map<number, { proc: Proc; call: CallState; atMs: number }>();
  /**
   * Records about a process whose exec (or fork) has not arrived yet: another
   * CPU's buffer can deliver a process's reads, writes, forks or exit before
   * its exec. They wait here, per pid, for a while.
   */
  private readonly early = new Map<number, EarlyRecords>();
  /**
   * Reads and writes of a forked process whose exec has not come (yet) that
   * no stream of its call took (its own pipes), per pid: its exec may still
   * come through a CPU buffer read later, and what the process read and
   * wrote after that exec is then the new call's (a delegate's stdin) or
   * helper's. Counted in the io tally already; kept up to
   * EARLY_RECORDS_TTL_MS, at most BEFORE_EXEC_MAX per process.
   */
  private readonly beforeExec = new Map<number, { since: number; ios: Array<{ io: IoInFlight; countedFor: Proc }>; overflow: boolean }>();
  /**
   * Execs whose parent is a traced process whose own exec has not come yet
   * (another CPU's buffer, read later), by parent pid: taken now, a delegate
   * would be a top-level call and a helper a call of its own. Up to
   * PARENT_WAIT_MS; their processes' records wait in `early` meanwhile.
   */
  private readonly awaitingParent = new Map<number, Array<{ pending: PendingExec; since: number }>>();
  private mode: CaptureMode;
  private readonly graceMs: number;
  private readonly maxStreamBytes: number;
  private readonly maxHelperStreamBytes: number;

  constructor(private readonly opts: AssemblerOptions) {
    this.mode = opts.captureMode ?? 'full';
    this.graceMs = opts.finalizeGraceMs ?? 0;
    this.maxStreamBytes = opts.maxStreamBytes ?? 4 * 1024 * 1024;
    this.maxHelperStreamBytes = opts.maxHelperStreamBytes ?? 64 * 1024;
  }

  /** Feeds one record; returns the events it completes. */
  push(rec: TracerRecord, nowMs: number): CollectorEvent[] {
    this.now = nowMs;
    this.counters.records++;
    const events: CollectorEvent[] = [];
    // What a call did to the kernel: attached to its call, decoded when it is published.
    if (isKernelRecord(rec)) {
      this.attachKernel(rec);
      return this.withRepublished(events);
    }
    switch (rec.kind) {
      case 'hello':
        this.mode = rec.mode;
        break;
      case 'exec':
        this.flushPendingExec(rec.pid, events);
        this.pendingExecs.set(execKey(rec.pid, rec.cpu), { since: nowMs, record: rec, block: newExecBlock(rec.blockBytes), parentComm: null, path: new ExecPathParts() });
        this.completeExecIfWhole(execKey(rec.pid, rec.cpu), events);
        break;
      case 'exec-chunk': {
        const pending = this.pendingExecs.get(execKey(rec.pid, rec.cpu));
        if (!pending) {
          this.counters.orphanChunks++;
          break;
        }
        pending.block.add(rec.off, rec.data);
        this.completeExecIfWhole(execKey(rec.pid, rec.cpu), events);
        break;
      }
      case 'exec-parent': {
        const pending = this.pendingExecs.get(execKey(rec.pid, rec.cpu));
        if (pending) pending.parentComm = rec.comm;
        break;
      }
      case 'exec-path-chunk':
        this.pendingExecs.get(execKey(rec.pid, rec.cpu))?.path.addPathChunk(rec.len, rec.off, rec.data);
        break;
      case 'exec-cwd-name':
        this.pendingExecs.get(execKey(rec.pid, rec.cpu))?.path.addCwdName(rec.depth, rec.name);
        break;
      case 'fork':
        this.flushPendingExec(rec.ppid, events);
        this.onFork(rec.ppid, rec.pid, rec.ts);
        break;
      case 'read':
      case 'write': {
        this.flushPendingExec(rec.pid, events);
        const key = ioKey(rec.tid, rec.cpu);
        this.commitIo(key);
        const io: IoInFlight = {
          since: nowMs,
          pid: rec.pid,
          tid: rec.tid,
          kind: rec.kind,
          fd: rec.fd,
          file: rec.file,
          ts: rec.ts,
          buf: new ChunkedBuffer(rec.len, PAYLOAD_CAP_BYTES),
        };
        this.ioByTid.set(key, io);
        // Nothing to wait for (a zero-length read at end of file): no chunk will come to complete it.
        if (io.buf.complete()) this.commitIo(key);
        break;
      }
      case 'data-chunk': {
        const key = ioKey(rec.tid, rec.cpu);
        const io = this.ioByTid.get(key);
        if (!io) {
          this.counters.orphanChunks++;
          break;
        }
        io.buf.add(rec.off, rec.data);
        if (io.buf.complete()) this.commitIo(key);
        break;
      }
      case 'uncaptured': {
        // No bytes: an empty, incomplete payload of the real length marks the stream truncated.
        this.flushPendingExec(rec.pid, events);
        const io: IoInFlight = { since: nowMs, pid: rec.pid, tid: rec.tid, kind: rec.direction, fd: rec.fd, file: rec.file, ts: rec.ts, buf: new ChunkedBuffer(rec.len, 0), uncaptured: true };
        this.fileIo(io);
        break;
      }
      case 'fd-copy': {
        this.flushPendingExec(rec.pid, events);
        const proc = this.procs.get(rec.pid);
        if (!proc) {
          this.counters.orphanChunks++;
          break;
        }
        this.ioTally.record(proc, nowMs);
        copyFd(proc, rec.oldFd, rec.newFd);
        break;
      }
      case 'exit':
        this.flushPendingExec(rec.pid, events);
        this.onExit(rec, nowMs);
        break;
      case 'thread-exit': {
        // Its last chunks may still come through another CPU's buffer: wait for them (or the finalize).
        for (const [key, io] of this.ioByTid) if (io.tid === rec.tid && io.buf.complete()) this.commitIo(key);
        // The payload records it printed are its process's too: the call waits for them as for its exit's count.
        // (Not dated against the process's exit: a thread still ending as the last one exits prints after it.)
        if (rec.pid !== undefined && rec.ts !== undefined && rec.ioRecords !== undefined && !this.canaryPids.has(rec.pid)) {
          const ended = { tid: rec.tid, ts: rec.ts, ioRecords: rec.ioRecords };
          const owner = this.procs.get(rec.pid);
          const published = this.publishedProcs.get(rec.pid)?.proc.exitTs;
          if (owner) this.ioTally.threadEnded(owner, ended.tid, ended.ts, ended.ioRecords, nowMs);
          // A published process's own thread (its records, should any come, go in late), else the pid's next process's.
          else if (published === undefined || rec.ts > published + THREAD_END_AFTER_EXIT_US) this.earlyFor(rec.pid).threadEnds.push(ended);
        }
        // A clone() of a thread looks like a fork to the tracer; drop that phantom.
        const proc = this.procs.get(rec.tid);
        if (proc && proc.role === 'fork' && proc.start === null) {
          this.procs.delete(rec.tid);
          this.outlived.delete(rec.tid);
          const call = proc.callId === null ? undefined : this.lingering.get(proc.callId)?.call;
          if (call && !this.hasLiveDescendant(proc.callId!, call)) this.releaseLingering(proc.callId!);
        }
        break;
      }
      case 'lost':
        // Without the time it arrived at, the loss can be anywhere: every call open now may be hit.
        this.counters.lostEvents += rec.count;
        for (const call of this.calls.values()) markLost(call, 'tracer-lost');
        break;
      case 'noise':
        break;
    }
    return this.withRepublished(events);
  }

  /** Adds the published calls that their descendants changed since. */
  private withRepublished(events: CollectorEvent[]): CollectorEvent[] {
    if (this.republished.length === 0) return events;
    events.push(...this.republished);
    this.republished.length = 0;
    return events;
  }

  /** Finalizes calls whose grace period after exit has passed. */
  tick(nowMs: number): CollectorEvent[] {
    this.now = Math.max(this.now, nowMs);
    const events: CollectorEvent[] = [];
    for (const [key, pending] of this.pendingExecs) {
      if (nowMs - pending.since >= CHUNKS_TTL_MS) this.completeExec(key, events);
    }
    for (const [ppid, waiting] of this.awaitingParent) {
      if (nowMs - waiting[0]!.since < PARENT_WAIT_MS && !this.procAt(ppid, waiting[0]!.pending.record.ts)) continue;
      this.awaitingParent.delete(ppid);
      for (const w of waiting) this.applyExec(w.pending, events, false);
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
    for (const [id, l] of this.lingering) if (nowMs - l.since >= OUTLIVED_TTL_MS) this.releaseLingering(id);
    this.ioTally.sweep(nowMs);
    this.lossWindows.forget(nowMs, LOSS_MEMORY_MS);
    for (const [id, p] of this.recentlyPublished) {
      if (nowMs - p.atMs < LOSS_MEMORY_MS) break;
      this.recentlyPublished.delete(id);
      this.publishedByPid.remove(p.call.base.pid, id);
      this.topLevelByPpid.remove(p.call.base.ppid, id);
    }
    for (const [pid, p] of this.publishedProcs) {
      if (nowMs - p.atMs < LOSS_MEMORY_MS) break;
      this.publishedProcs.delete(pid);
    }
    for (const [pid, { at }] of this.lostBeforeExec) if (nowMs - at >= EARLY_RECORDS_TTL_MS) this.lostBeforeExec.delete(pid);
    const waits = { missingIo: (c: CallState) => this.missingIo(c), hasLiveDescendant: (id: string, c: CallState) => this.hasLiveDescendant(id, c) };
    for (const id of publicationOrder(this.calls, nowMs, waits)) events.push(this.finalize(id, this.calls.get(id)!));
    // After publishing too: a read or write its publication let go may have come here (made after its process's exit).
    for (const [pid, early] of this.early) {
      if (nowMs - early.since < EARLY_RECORDS_TTL_MS) continue;
      this.early.delete(pid);
      this.counters.orphanChunks += early.ios.length + early.forks.length + early.threadEnds.length + (early.exit ? 1 : 0);
    }

    // After publishing: what its last reads and writes left here is as old as they are.
    for (const [pid, kept] of this.beforeExec) if (nowMs - kept.since >= EARLY_RECORDS_TTL_MS) this.beforeExec.delete(pid);
    return this.withRepublished(events);
  }

  /** Whether a process of the call exited with payload records announced that have not all come. */
  private missingIo(call: CallState): boolean {
    for (const proc of this.ioTally.waiting()) if (proc.callId === call.base.id) return true;
    return false;
  }

  /** Whether a call that started before `epochUs` is not published yet (its bytes may still come from its tracer). */
  hasOpenCallStartedBefore(epochUs: number): boolean {
    for (const call of this.calls.values()) if (call.base.startedAtUs < epochUs) return true;
    return false;
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
    for (const key of [...this.pendingExecs.keys()]) this.completeExec(key, events);
    for (const waiting of [...this.awaitingParent.values()]) for (const w of waiting) this.applyExec(w.pending, events, false);
    this.awaitingParent.clear();
    for (const [id, call] of this.calls) {
      if (call.endedAtUs === null) call.incompleteReason = reason;
      events.push(this.finalize(id, call));
    }
    for (const id of [...this.lingering.keys()]) this.releaseLingering(id);
    this.procs.clear();
    this.outlived.clear();
    this.ioByTid.clear();
    this.beforeExec.clear();
    this.ioTally.clear();
    return this.withRepublished(events);
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
    for (const kept of this.beforeExec.values()) earlyRecords += kept.ios.length;
    return {
      procs: this.procs.size,
      calls: this.calls.size,
      pendingExecs: this.pendingExecs.size + this.awaitingParent.size,
      ioInFlight: this.ioByTid.size,
      earlyRecords,
    };
  }

  /**
   * Marks the call `pid` works for as having lost records (the tracer that
   * captured its payloads died under it). A process whose exec has not come
   * yet (another CPU's buffer) is remembered, and its call marked when it
   * does.
   */
  markLostRecords(pid: number, why: LostRecordsCause = 'payload-tracer-cut'): void {
    const callId = this.procs.get(pid)?.callId;
    const call = callId ? this.calls.get(callId) : undefined;
    if (call) markLost(call, why);
    else this.lostBeforeExec.set(pid, { at: this.now, why });
  }

  /**
   * A tracer lost `count` records somewhere in `window` (kernel µs; see
   * record-flow.ts for how it is bounded). Every call alive at any moment of
   * it is marked lostRecords: those open now, those whose exec is still on
   * its way (checked when they are published), and those published lately,
   * which are published again, marked.
   */
  recordsLost(count: number, window: LossWindow, nowMs: number): CollectorEvent[] {
    this.now = Math.max(this.now, nowMs);
    this.counters.lostEvents += count;
    this.lossWindows.add(window, nowMs);
    for (const call of this.calls.values()) if (overlaps(call, window)) markLost(call, 'tracer-lost');
    for (const l of this.lingering.values()) if (overlaps(l.call, window) && !l.call.lostRecords) {
      markLost(l.call, 'tracer-lost');
      l.changed = true;
    }
    for (const [id, p] of this.recentlyPublished) {
      if (p.call.lostRecords || this.lingering.has(id) || !overlaps(p.call, window)) continue;
      markLost(p.call, 'tracer-lost');
      this.republished.push({ type: 'call.updated', call: snapshotCall(p.call) });
    }
    return this.withRepublished([]);
  }

  /** Every live process this assembler follows. */
  livePids(): number[] {
    const out: number[] = [];
    for (const proc of this.procs.values()) if (!proc.exited) out.push(proc.pid);
    return out;
  }

  private completeExecIfWhole(key: number, events: CollectorEvent[]): void {
    const pending = this.pendingExecs.get(key);
    if (pending && pending.block.complete()) this.completeExec(key, events);
  }

  /** Completes the execs of `pid` still waiting for chunks (one per CPU at most), oldest first, with what they have. */
  private flushPendingExec(pid: number, events: CollectorEvent[]): void {
    if (this.pendingExecs.size === 0) return;
    const keys: number[] = [];
    for (const [key, pending] of this.pendingExecs) if (pending.record.pid === pid) keys.push(key);
    if (keys.length > 1) keys.sort((a, b) => this.pendingExecs.get(a)!.record.ts - this.pendingExecs.get(b)!.record.ts);
    for (const key of keys) this.completeExec(key, events);
  }

  /** Completes an exec record (by its execKey), with whatever chunks arrived. */
  private completeExec(key: number, events: CollectorEvent[]): void {
    const pending = this.pendingExecs.get(key);
    if (!pending) return;
    this.pendingExecs.delete(key);
    this.applyExec(pending, events, true);
  }

  /**
   * An exec, whole or with what came of it. `mayWait`: it may wait for the
   * exec of its parent, when that is a traced process not known yet.
   */
  private applyExec(pending: PendingExec, events: CollectorEvent[], mayWait: boolean): void {
    const rec = pending.record;
    const decoded = decodeExecBlock(pending.block, rec.argBytes);
    if (decoded.env.CNI_COMMAND === CANARY_COMMAND) {
      this.counters.canaries++;
      this.early.delete(rec.pid);
      this.rememberCanary(rec.pid);
      return;
    }
    if (this.opts.isOwnCanary?.(rec.pid, rec.ppid)) {
      // Our canary seen without its environment (bpftrace still attaching its probes): no call, and no proof of recording.
      this.early.delete(rec.pid);
      this.rememberCanary(rec.pid);
      return;
    }
    let existing = this.procs.get(rec.pid) ?? this.exitedBeforeExec(rec.pid, rec.start);
    if (existing && existing.start === null && ((existing.ppid !== rec.ppid && this.parentLives(existing)) || forkedBefore(existing, rec.start) || (existing.forkTs !== undefined && existing.forkTs > rec.ts))) {
      // A stale fork entry (a thread's clone whose end was not seen) under a pid now used by another process,
      // or one of a later task with this pid (forked after this exec: its record came first).
      // (A child whose parent is gone was re-parented: its fork entry is right, unless it is dated before
      // the process started: a process's fork comes after its start time.)
      this.procs.delete(rec.pid);
      existing = undefined;
    }
    if (existing && existing.start !== null && existing.start !== rec.start) {
      // The pid was reused and the old process's exit never arrived.
      this.retire(existing, 'the process exit was not seen (pid reused)', events);
      existing = undefined;
    }
    // Ancestry comes from the fork records: a child whose parent exited is re-parented (to init or a
    // subreaper) by the time it execs, but it still works for the call its parent worked for.
    const parent = existing ?? this.procAt(rec.ppid, rec.ts);
    if (mayWait && parent === undefined && (rec.parentTraced === true || this.early.has(rec.ppid))) {
      // Its parent is traced (the tracer says so, or records of it came, waiting for its exec: a fork naming this
      // process, say) and its exec is still in a CPU buffer read later: without it this exec would be taken for a
      // call of its own.
      this.awaitParent(pending);
      return;
    }
    const parentCallId = parent?.callId ?? this.lateChildOf(rec.ppid, rec.ts);
    // The tracer said its parent is traced, yet no record of the parent came in all that wait: the parent's exec
    // was lost (a full buffer). A call is made of it, marked: its parent call and what it shared with it are unknown.
    const parentLost = rec.parentTraced === true && parent === undefined && parentCallId === null;
    const startedAtUs = this.opts.monoToEpochUs(rec.ts);
    const { filename, cut: pathCut } = pending.path.filename(rec.path);
    // A relative path (`./host-local`, a relative CNI_PATH entry) made absolute: where it lies decides whether it is a call.
    const cwd = pending.path.cwd();
    const execPath = resolveExecPath(filename || decoded.argv[0] || '', cwd);
    // An env whose chunks did not all come may lack CNI_PATH: a child's is its parent call's (a delegate inherits it).
    const cniPath = decoded.env.CNI_PATH ?? (pending.block.complete() || parentCallId === null ? undefined : this.callFor(parentCallId)?.base.env.CNI_PATH);
    const inCniPath = isInCniPath(execPath, cniPath, cwd);
    const plugin = existing?.role === 'plugin' && existing.callId !== null ? this.callFor(existing.callId) : undefined;
    if (plugin && plugin.base.pid === rec.pid) {
      // The plugin process exec'd another image in place: the same process, the same pipes, the same call.
      if (!plugin.execTimes.includes(rec.ts)) this.execInPlace(plugin, rec, { execPath, pathCut }, decoded, inCniPath, startedAtUs);
      else this.counters.duplicateExecs++;
      existing!.start = rec.start;
      this.resumeChildren(rec.pid, events);
      this.replayEarly(rec.pid, rec.ts, rec.start);
      return;
    }
    const parentCall = parentCallId === null ? undefined : this.callFor(parentCallId);
    const isPlugin = parentCallId === null || inCniPath;
    const id = callId(startedAtUs, rec.pid);
    if (isPlugin && (this.calls.has(id) || this.recentIds.has(id))) {
      // The same exec again (a record delivered twice): one call, not a second one that replaces the first.
      this.counters.duplicateExecs++;
      return;
    }
    const proc: Proc = existing ?? { pid: rec.pid, ppid: rec.ppid, start: null, callId: null, role: 'fork', helper: null, exited: false };
    if (proc.role === 'helper' && proc.helper && proc.helper.endedAtUs === null && isPlugin) {
      // A helper that exec'd a plugin in place: the helper's own image ends here.
      proc.helper.endedAtUs = startedAtUs;
    }
    proc.start = rec.start;
    const ppid = existing?.ppid ?? rec.ppid;
    proc.ppid = ppid;
    this.procs.set(rec.pid, proc);
    if (isPlugin) {
      // Not exec'd by a call: maybe a delegate of a shim that asked a daemon to run it (Multus thick mode).
      const parentId = parentCallId ?? shimParentFor(this.shimCalls.values(), { containerId: decoded.env.CNI_CONTAINERID, ppid: rec.ppid, startedAtUs });
      const call = this.newCall(rec, { execPath, pathCut }, decoded, parentId, parentCallId === null, startedAtUs, pending.parentComm);
      proc.role = 'plugin';
      proc.callId = call.base.id;
      proc.helper = null;
      call.pids.add(rec.pid);
      this.calls.set(call.base.id, call);
      if (call.base.parentId === null) this.topLevelByPpid.add(call.base.ppid, call.base.id);
      const lostEarly = this.lostBeforeExec.get(rec.pid);
      if (lostEarly && this.lostBeforeExec.delete(rec.pid)) markLost(call, lostEarly.why);
      // Its argv/env chunks did not all come (lost, or still in a CPU buffer unread when the wait for them ended):
      // what it says of itself (container, command) may be wrong.
      if (!pending.block.complete() || parentLost) markLost(call, 'tracer-lost');
      if (SOCKET_SHIM_PLUGINS.has(call.base.plugin)) this.shimCalls.set(call.base.id, call);
      this.counters.callsStarted++;
      events.push({ type: 'call.started', call: snapshotCall(call) });
    } else if (parentCall) {
      const helper = this.newHelper(rec.pid, ppid, execPath, decoded.argv, startedAtUs);
      parentCall.helpers.push(helper);
      parentCall.pids.add(rec.pid);
      proc.role = 'helper';
      proc.callId = parentCallId;
      proc.helper = helper;
      this.touchLingering(parentCallId!);
    } else {
      // A descendant of a call published and let go long ago: still no call of its own, nothing to add to.
      proc.callId = parentCallId;
    }
    // Its exit came first (its exec through a CPU buffer read later), applied to the fork entry: it ends what it
    // became now. Without this, a delegate exited long ago stayed running until the liveness sweep gave up on it.
    this.endWithProcess(proc, this.now);
    // Its children whose exec came first: those that waited for it, and delegates taken for calls of their own.
    this.resumeChildren(rec.pid, events);
    if (proc.role === 'plugin') this.adoptEarlyCalls(proc, rec.ts);
    this.replayBeforeExec(proc, rec.ts);
    this.replayEarly(rec.pid, rec.ts, rec.start);
  }

  /**
   * The fork entry of process `pid` if it exited, and its parent's call was
   * published, before its exec came (its exec through a CPU buffer read
   * later): the exec is that process's, and its exit ends what it becomes.
   * Its reads and writes came before publication too (counted, kept for the
   * exec): nothing more is waited for.
   */
  private exitedBeforeExec(pid: number, start: string): Proc | undefined {
    const p = this.publishedProcs.get(pid);
    if (!p || p.proc.role !== 'fork' || p.proc.start !== start || !p.proc.exited) return undefined;
    this.publishedProcs.delete(pid);
    return p.proc;
  }

  /** Holds an exec until its parent's exec (or fork) comes, up to PARENT_WAIT_MS. */
  private awaitParent(pending: PendingExec): void {
    const ppid = pending.record.ppid;
    const waiting = this.awaitingParent.get(ppid);
    // Dated from its arrival: an exec that waited out its chunks does not wait as long again.
    if (waiting) waiting.push({ pending, since: pending.since });
    else this.awaitingParent.set(ppid, [{ pending, since: pending.since }]);
  }

  /** Process `pid` is known now: the execs of its children that waited for it go on, in order. */
  private resumeChildren(pid: number, events: CollectorEvent[]): void {
    const waiting = this.awaitingParent.get(pid);
    if (!waiting) return;
    this.awaitingParent.delete(pid);
    for (const w of waiting) this.applyExec(w.pending, events, false);
  }

  /**
   * A plugin's exec came after the exec of a delegate it ran (another CPU's
   * buffer, read later), and nothing told that its parent was traced: the
   * delegate was taken for a top-level call. It is this call's delegate; a
   * program outside CNI_PATH taken for a call was its helper, whose output
   * to the call's files went to that false call: both are marked. Published
   * ones are published again.
   */
  private adoptEarlyCalls(plugin: Proc, execTs: number): void {
    const callId = plugin.callId;
    const call = callId === null ? undefined : this.calls.get(callId);
    if (!call || callId === null) return;
    const adopt = (c: CallState): boolean => {
      if (c === call || c.base.parentId !== null || c.base.ppid !== plugin.pid || c.execTimes[0]! <= execTs) return false;
      if (isInCniPath(c.base.path, c.base.env.CNI_PATH)) {
        c.base = { ...c.base, parentId: callId, parentProcess: null };
        call.pids.add(c.base.pid);
      } else {
        markLost(c, 'out-of-order');
        markLost(call, 'out-of-order');
      }
      return true;
    };
    const started = this.topLevelByPpid.get(plugin.pid);
    for (const id of started) {
      const open = this.calls.get(id);
      if (open && adopt(open)) this.topLevelByPpid.remove(plugin.pid, id);
    }
    for (const id of started) {
      const p = this.recentlyPublished.get(id);
      if (this.calls.has(id)) continue;
      if (!p) {
        this.topLevelByPpid.remove(plugin.pid, id);
        continue;
      }
      if (!adopt(p.call)) continue;
      this.topLevelByPpid.remove(plugin.pid, id);
      const l = this.lingering.get(id);
      if (l) l.changed = true;
      else this.republished.push({ type: 'call.updated', call: snapshotCall(p.call) });
    }
  }

  private keepBeforeExec(io: IoInFlight, countedFor: Proc): void {
    let kept = this.beforeExec.get(io.pid);
    if (!kept) {
      kept = { since: io.since, ios: [], overflow: false };
      this.beforeExec.set(io.pid, kept);
    }
    if (kept.ios.length < BEFORE_EXEC_MAX) kept.ios.push({ io, countedFor });
    else kept.overflow = true;
  }

  /** A forked process exec'd: its reads and writes kept since, dated after the exec, go to what it is now. */
  private replayBeforeExec(proc: Proc, execTs: number): void {
    const kept = this.beforeExec.get(proc.pid);
    if (!kept) return;
    this.beforeExec.delete(proc.pid);
    if (kept.overflow) this.markLostRecords(proc.pid, 'early-overflow');
    for (const { io, countedFor } of kept.ios) {
      if (io.ts < execTs) continue;
      if (countedFor === proc) {
        this.fileIo(io, true);
      } else {
        // Counted for the process the pid named then; it is this one's.
        this.ioTally.uncount(countedFor);
        this.fileIo(io);
      }
    }
  }

  /**
   * The published call whose plugin process `ppid` was, running at `ts`:
   * its child's exec came after it was published (a CPU buffer drained later
   * than the reorder window allowed for). The child is still its delegate or
   * helper, and the call is published again once it ends.
   */
  private lateChildOf(ppid: number, ts: number): string | null {
    for (const id of this.publishedByPid.get(ppid)) {
      const p = this.recentlyPublished.get(id);
      if (!p) {
        this.publishedByPid.remove(ppid, id);
        continue;
      }
      const c = p.call;
      if (c.base.pid !== ppid || c.execTimes[0]! > ts || (c.exitTs !== null && ts > c.exitTs)) continue;
      const l = this.lingering.get(id);
      if (l) l.changed = true;
      else this.lingering.set(id, { call: c, since: this.now, changed: true });
      return id;
    }
    return null;
  }

  /** An exec in place by a call's plugin process: the chain grows; a CNI plugin image names the call from now on. */
  private execInPlace(call: CallState, rec: Extract<TracerRecord, { kind: 'exec' }>, { execPath, pathCut }: ExecImage, decoded: DecodedExecBlock, inCniPath: boolean, startedAtUs: number): void {
    call.execChain.push(execPath);
    call.execTimes.push(rec.ts);
    if (inCniPath) {
      call.base = { ...call.base, path: execPath, plugin: pluginName(execPath), argv: decoded.argv, ...identityFromEnv(decoded.env) };
      call.envTruncated = decoded.truncated;
      call.pathTruncated = pathCut;
      // A wrapper that exec'd a socket shim (or a shim that exec'd something else) changes where delegates look.
      if (SOCKET_SHIM_PLUGINS.has(call.base.plugin)) this.shimCalls.set(call.base.id, call);
      else this.shimCalls.delete(call.base.id);
    } else {
      // A program that is no plugin (`exec cat`): a helper step of the same call, which keeps its name.
      call.helpers.push(this.newHelper(rec.pid, rec.ppid, execPath, decoded.argv, startedAtUs));
    }
    this.touchLingering(call.base.id);
  }

  private newCall(
    rec: Extract<TracerRecord, { kind: 'exec' }>,
    { execPath, pathCut }: ExecImage,
    decoded: DecodedExecBlock,
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
    return newCallState({
      rec,
      execPath,
      argv: decoded.argv,
      env: decoded.env,
      parentId,
      parentProcess,
      startedAtUs,
      captureMode: this.mode,
      maxStreamBytes: this.maxStreamBytes,
      envTruncated: decoded.truncated,
      pathTruncated: pathCut,
    });
  }

  private newHelper(pid: number, ppid: number, execPath: string, argv: string[], startedAtUs: number): HelperState {
    return newHelperState(pid, ppid, execPath, argv, startedAtUs, this.maxHelperStreamBytes);
  }

  private earlyFor(pid: number): EarlyRecords {
    let early = this.early.get(pid);
    if (!early) {
      early = { since: this.now, ios: [], forks: [], exit: null, threadEnds: [] };
      this.early.set(pid, early);
    }
    return early;
  }

  /** The process is known now: what arrived before its exec or fork applies to it. */
  private replayEarly(pid: number, execTs: number | null, start: string | null): void {
    const early = this.early.get(pid);
    if (!early) return;
    this.early.delete(pid);
    for (const child of early.forks) this.onFork(pid, child.pid, child.ts);
    for (const io of early.ios) {
      if (execTs === null || io.ts >= execTs) this.fileIo(io);
      else this.counters.orphanChunks++;
    }
    const proc = this.procs.get(pid);
    if (proc) for (const t of early.threadEnds) this.ioTally.threadEnded(proc, t.tid, t.ts, t.ioRecords, this.now);
    if (early.exit && (start === null || early.exit.start === start)) this.onExit(early.exit, this.now);
  }

  private onFork(ppid: number, pid: number, ts?: number): void {
    const parent = this.procAt(ppid, ts);
    if (!parent) {
      this.earlyFor(ppid).forks.push({ pid, ts });
      return;
    }
    const existing = this.procs.get(pid);
    // The child's exec may have been delivered first (another CPU's buffer); keep what it said. Its exit too:
    // a fork dated before the exit of the process it names is that process's own fork, not a new process's.
    if (existing && (!existing.exited || (ts !== undefined && existing.ppid === ppid && existing.exitTs !== undefined && ts < existing.exitTs))) {
      // Unless it is a fork entry whose end was not seen (a thread's), and this a later fork of a new task.
      const stale = existing.start === null && existing.forkTs !== undefined && ts !== undefined && ts > existing.forkTs;
      if (!stale) return;
    }
    // The late fork record of a process whose call is published already (dated before its exit): no new process.
    const published = this.publishedProcs.get(pid);
    if (published && ts !== undefined && published.proc.exitTs !== undefined && ts < published.proc.exitTs) return;
    // A new process under this pid (a new entry: nothing counted for an earlier one counts for it).
    this.procs.set(pid, { pid, ppid, start: null, callId: parent.callId, role: 'fork', helper: null, exited: false, ...(ts !== undefined ? { forkTs: ts } : {}), ...(parent.fds ? { fds: new Map(parent.fds) } : {}) });
    if (parent.callId) this.callFor(parent.callId)?.pids.add(pid);
    this.replayEarly(pid, null, null);
  }

  private rememberCanary(pid: number): void {
    this.canaryPids.add(pid);
    if (this.canaryPids.size > CANARY_PIDS_MAX) this.canaryPids.delete(this.canaryPids.values().next().value!);
  }

  /** A canary's write: the known payload, checked byte for byte. */
  private checkCanaryPayload(io: IoInFlight): void {
    if (io.kind !== 'write' || io.fd !== 1) return;
    const expected = Buffer.from(CANARY_OUTPUT);
    if (!io.uncaptured && io.buf.complete() && io.buf.length === expected.length && io.buf.bytes().equals(expected)) this.counters.canaryPayloads++;
    else this.counters.canaryPayloadMismatches++;
  }

  private onExit(rec: Extract<TracerRecord, { kind: 'exit' }>, nowMs: number): void {
    // An incomplete read/write stays open: its last chunks may come after the exit (another CPU's buffer).
    for (const [key, io] of this.ioByTid) if (io.pid === rec.pid && io.buf.complete()) this.commitIo(key);
    if (this.canaryPids.delete(rec.pid)) return;
    const proc = this.procs.get(rec.pid);
    if (!proc) {
      this.earlyFor(rec.pid).exit = rec;
      return;
    }
    if (proc.start !== null && proc.start !== rec.start) return;
    this.ioTally.exited(proc, rec.ioRecords, nowMs);
    proc.start = rec.start;
    proc.exited = true;
    proc.exitTs = rec.ts;
    proc.outcome = decodeWaitStatus(rec.exitCode, rec.groupExitCode, rec.signalFlags);
    this.endWithProcess(proc, nowMs);
    // A helper or fork that outlived its call's publication: nothing will ever clear it but this.
    if (proc.callId === null || !this.calls.has(proc.callId)) {
      this.procs.delete(rec.pid);
      this.ioTally.forget(proc);
      this.outlived.delete(rec.pid);
      // A fork whose exec may still come (another CPU's buffer): that exec takes it up (exitedBeforeExec).
      const published = proc.callId === null ? undefined : this.recentlyPublished.get(proc.callId);
      if (proc.role === 'fork' && published) this.publishedProcs.set(rec.pid, { proc, call: published.call, atMs: this.now });
      if (proc.callId !== null) {
        // A helper's row ends with it (no "running" helper left behind in a published call).
        if (proc.role === 'helper') this.touchLingering(proc.callId);
        this.descendantEnded(proc.callId);
      }
    }
  }

  /** An exited process's exit ends its helper's row, or its call when it is the call's plugin process. */
  private endWithProcess(proc: Proc, nowMs: number): void {
    if (!proc.exited || proc.exitTs === undefined || proc.outcome === undefined) return;
    const endedAtUs = this.opts.monoToEpochUs(proc.exitTs);
    if (proc.role === 'helper' && proc.helper) {
      proc.helper.endedAtUs = endedAtUs;
      proc.helper.outcome = proc.outcome;
    }
    if (proc.role === 'plugin' && proc.callId) {
      const call = this.calls.get(proc.callId);
      if (call && call.base.pid === proc.pid && call.endedAtUs === null) {
        call.endedAtUs = endedAtUs;
        call.exitTs = proc.exitTs;
        call.outcome = proc.outcome;
        call.finalizeDueMs = nowMs + this.graceMs;
      }
    }
  }

  /**
   * A record of what a process did to the kernel goes to its call as it is;
   * collector/changes decodes it when the call is published. Chunks of a
   * netlink request go where their request went.
   */
  private attachKernel(rec: KernelRecord): void {
    let call: CallState | undefined;
    if (rec.kind === 'netlink-chunk') {
      call = this.netlinkCalls.get(`${rec.tid}:${rec.ts}`);
    } else {
      const id = this.procs.get(rec.pid)?.callId;
      call = id == null ? undefined : this.callFor(id);
      if (call && rec.kind === 'netlink-send') {
        if (this.netlinkCalls.size > 4096) this.netlinkCalls.clear();
        this.netlinkCalls.set(`${rec.tid}:${rec.ts}`, call);
      }
    }
    if (!call) {
      this.counters.orphanChunks++;
      return;
    }
    if (call.netnsNames === null) {
      const podPath = call.base.netns;
      call.netnsNames = { host: this.opts.hostNetnsInode ?? null, pod: podPath ? (this.opts.netnsInodeOf?.(podPath) ?? null) : null, podPath };
    }
    call.kernel.push({ atUs: this.opts.monoToEpochUs(rec.ts), rec });
  }

  /** The open call, or the published one whose descendants still run. */
  private callFor(id: string): CallState | undefined {
    return this.calls.get(id) ?? this.lingering.get(id)?.call;
  }

  /** A published call's descendants did something that changes it: it is published again when they are done. */
  private touchLingering(id: string): void {
    const l = this.lingering.get(id);
    if (l) l.changed = true;
  }

  /**
   * The process `pid` named at `ts` (kernel µs), as far as known: not one
   * whose exit came before it (the pid's next process, whose exec or fork is
   * still in a CPU buffer read later, made that record).
   */
  private procAt(pid: number, ts: number | undefined): Proc | undefined {
    const proc = this.procs.get(pid);
    if (proc && ts !== undefined && proc.exited && proc.exitTs !== undefined && proc.exitTs < ts) return undefined;
    return proc;
  }

  /** Whether the parent a fork record named is still followed and alive (else the child was re-parented). */
  private parentLives(proc: Proc): boolean {
    const parent = this.procs.get(proc.ppid);
    return parent !== undefined && !parent.exited;
  }

  /** Whether a process of this call still runs. */
  private hasLiveDescendant(id: string, call: CallState): boolean {
    for (const pid of call.pids) {
      const proc = this.procs.get(pid);
      if (proc && proc.callId === id && !proc.exited && pid !== call.base.pid) return true;
    }
    return false;
  }

  /** A descendant of a published call ended: when it was the last, the call is published once more if it changed. */
  private descendantEnded(id: string): void {
    const l = this.lingering.get(id);
    if (l && !this.hasLiveDescendant(id, l.call)) this.releaseLingering(id);
  }

  private readonly republished: CollectorEvent[] = [];

  private releaseLingering(id: string): void {
    const l = this.lingering.get(id);
    if (!l) return;
    this.lingering.delete(id);
    if (l.changed) this.republished.push({ type: 'call.updated', call: snapshotCall(l.call) });
  }

  /** Moves a finished read/write (by its ioKey) into the stream it belongs to. */
  private commitIo(key: number): void {
    const io = this.ioByTid.get(key);
    if (!io) return;
    this.ioByTid.delete(key);
    this.fileIo(io);
  }

  /** `counted`: already in the io tally (kept for an exec that came later). */
  private fileIo(io: IoInFlight, counted = false): void {
    if (this.canaryPids.has(io.pid)) {
      this.checkCanaryPayload(io);
      return;
    }
    const proc = this.procAt(io.pid, io.ts);
    if (!proc && this.fileLate(io)) return;
    if (!proc) {
      const early = this.earlyFor(io.pid);
      // Dated from its own arrival: one let go by a publication is as old as it is.
      early.since = Math.min(early.since, io.since);
      early.ios.push(io);
      return;
    }
    // Counted once it is the known process's: a record never attributed cannot stand in for a later process's.
    if (!counted) this.ioTally.record(proc, this.now);
    const call = proc.callId ? this.callFor(proc.callId) : undefined;
    if (!call) {
      this.counters.orphanChunks++;
      return;
    }
    this.touchLingering(call.base.id);
    const isMain = proc.role === 'plugin' && call.base.pid === proc.pid;
    const stream = streamFor(call, proc, io, isMain);
    if (stream === null && !counted) {
      // Not the call's: maybe the bytes of what this fork exec'd, or of the next process with this pid (this one's
      // exit not in yet), that exec still in a CPU buffer read later.
      this.keepBeforeExec(io, proc);
      return;
    }
    if (stream && io.uncaptured) call.uncapturedIo++;
    stream?.add(io.ts, this.seq++, io.buf.bytes(), io.buf.length, io.buf.complete());
  }

  /**
   * A read or write of a process of a published call, made before its exit,
   * that came after the call was published. The tracer's counts (per thread,
   * exact) hold a call until its records are in, so this is a safety net: for
   * what those counts miss (a thread's end never seen, an older tracer's
   * count per process, which two threads printing at once on two CPUs could
   * bump once for two) or a call published without its records after
   * IO_WAIT_MS. Its bytes go in (streams are ordered by time) and the call is
   * published again: what is stored ends byte-exact.
   */
  private fileLate(io: IoInFlight): boolean {
    const late = this.publishedProcs.get(io.pid);
    if (!late || io.ts > late.proc.exitTs! || (late.proc.forkTs !== undefined && io.ts < late.proc.forkTs)) return false;
    const { proc, call } = late;
    if (proc.pid === call.base.pid && io.ts < call.execTimes[0]!) return false;
    const stream = streamFor(call, proc, io, proc.role === 'plugin' && call.base.pid === proc.pid);
    if (stream === null) return true;
    if (io.uncaptured) call.uncapturedIo++;
    stream.add(io.ts, this.seq++, io.buf.bytes(), io.buf.length, io.buf.complete());
    const l = this.lingering.get(call.base.id);
    if (l) l.changed = true;
    else this.republished.push({ type: 'call.updated', call: snapshotCall(call) });
    return true;
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
    this.shimCalls.delete(id);
    if (this.lossWindows.hit(call)) markLost(call, 'tracer-lost');
    if (call.lostWhy !== null) this.counters.callsMarked[call.lostWhy]++;
    this.recentlyPublished.set(id, { call, atMs: this.now });
    this.publishedByPid.add(call.base.pid, id);
    this.recentIds.add(id);
    if (this.recentIds.size > RECENT_IDS) this.recentIds.delete(this.recentIds.values().next().value!);
    let outlivedBy = 0;
    for (const pid of call.pids) {
      const proc = this.procs.get(pid);
      if (proc?.callId !== id) continue;
      if (proc.exited || proc.pid === call.base.pid) {
        this.procs.delete(pid);
        this.ioTally.forget(proc);
        if (proc.exited && proc.exitTs !== undefined) {
          this.publishedProcs.delete(pid);
          this.publishedProcs.set(pid, { proc, call, atMs: this.now });
        }
      } else {
        this.outlived.set(pid, { proc, since: this.now });
        outlivedBy++;
      }
    }
    if (outlivedBy > 0 && call.incompleteReason === null) this.lingering.set(id, { call, since: this.now, changed: false });
    this.counters.callsFinished++;
    return { type: 'call.finished', call: snapshotCall(call) };
  }
}

/** Whether a fork entry was made by a fork dated before the process `start` (kernel ns) began: another task's. */
function forkedBefore(proc: Proc, start: string): boolean {
  // 1 µs of slack for the float conversions; a task's fork record is dated after its start time.
  return proc.forkTs !== undefined && proc.forkTs < Number(start) / 1000 - 1;
}

/** An exec waiting for its chunks, by pid and by the CPU buffer they come through. */
function execKey(pid: number, cpu: number | undefined): number {
  return pid + (cpu ?? 0) * TID_SPACE;
}

/** A read or write in flight, by thread and by the CPU buffer its chunks come through. */
function ioKey(tid: number, cpu: number | undefined): number {
  return tid + (cpu ?? 0) * TID_SPACE;
}

/**
 * Turns tracer records into CNI calls: exec → stdin/stdout/stderr → exit,
 * with delegated plugin calls linked to their parent call and helper
 * processes to the call they work for. Pure: no I/O, no clock of its own
 * (callers pass `nowMs`), so it can be replayed from recorded tracer output.
 */

import { callId, foreignProc, identityFromEnv, newCallState, newHelperState, pluginName, snapshotCall, type CallState, type HelperState, type Proc } from './call-state.js';
import { ChunkedBuffer } from './chunked-buffer.js';
import { isInCniPath } from './cni-env.js';
import { decodeExecBlock, newExecBlock, type DecodedExecBlock } from './exec-block.js';
import { IoTally } from './io-tally.js';
import { KeptEnvEntries } from './kept-env.js';
import { ExecPathParts, resolveExecPath } from './exec-path.js';
import { decodeWaitStatus } from './wait-status.js';
import type { StreamCapture } from './stream-capture.js';
import { SOCKET_SHIM_PLUGINS, shimParentFor } from './socket-shims.js';
import { PAYLOAD_CAP_BYTES, TID_SPACE, type CaptureMode, type KernelRecord, type TracerRecord } from '../../bpf/index.js';
import type { CollectorEvent, ParentProcess } from '../types.js';

export { callId } from './call-state.js';

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
  /** The kept env entries sent apart from the block (null: no E line, an older tracer's output). */
  env: KeptEnvEntries | null;
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
/**
 * How long past its grace period a call waits for payload records its
 * processes' exits announced (see IoTally) before it is published without
 * them, marked lostRecords.
 */
const IO_WAIT_MS = 10_000;
/**
 * How long past its grace period a call waits for the exits of descendants
 * not seen to end: about the longest bpftrace's output lags under a burst.
 */
const DESCENDANT_EXIT_WAIT_MS = 2_000;
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
  };
  /** Canary processes whose exec was seen: their write is checked, not filed. */
  private readonly canaryPids = new Set<number>();
  private readonly procs = new Map<number, Proc>();
  private readonly calls = new Map<string, CallState>();
  /** The open calls of socket shims, apart: every new top-level call looks for its shim among them, not among all calls. */
  private readonly shimCalls = new Map<string, CallState>();
  private readonly pendingExecs = new Map<number, PendingExec>();
  /** Reads/writes waiting for their chunks, by thread and CPU (ioKey): a thread's next one may come between them. */
  private readonly ioByTid = new Map<number, IoInFlight>();
  /** Each process's payload records against the count its exit announced. */
  private readonly ioTally = new IoTally();
  /** Processes marked lostRecords before their exec came, and when (see markLostRecords). */
  private readonly lostBeforeExec = new Map<number, number>();
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
        this.pendingExecs.set(rec.pid, { since: nowMs, record: rec, block: newExecBlock(rec.blockBytes), env: null, parentComm: null, path: new ExecPathParts() });
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
      case 'env-scan':
      case 'env-entry':
      case 'env-chunk': {
        const pending = this.pendingExecs.get(rec.pid);
        if (!pending) {
          this.counters.orphanChunks++;
          break;
        }
        if (rec.kind === 'env-scan') pending.env = new KeptEnvEntries(rec.found);
        else if (rec.kind === 'env-entry') pending.env?.addEntry(rec.slot, rec.len);
        else pending.env?.addChunk(rec.slot, rec.off, rec.data);
        this.completeExecIfWhole(rec.pid, events);
        break;
      }
      case 'exec-path-chunk':
        this.pendingExecs.get(rec.pid)?.path.addPathChunk(rec.len, rec.off, rec.data);
        break;
      case 'exec-cwd-name':
        this.pendingExecs.get(rec.pid)?.path.addCwdName(rec.depth, rec.name);
        break;
      case 'fork':
        this.flushPendingExec(rec.ppid, events);
        this.onFork(rec.ppid, rec.pid);
        break;
      case 'read':
      case 'write': {
        this.flushPendingExec(rec.pid, events);
        this.ioTally.record(rec.pid, nowMs);
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
        this.ioTally.record(rec.pid, nowMs);
        const io: IoInFlight = { since: nowMs, pid: rec.pid, tid: rec.tid, kind: rec.direction, fd: rec.fd, file: rec.file, ts: rec.ts, buf: new ChunkedBuffer(rec.len, 0), uncaptured: true };
        this.fileIo(io);
        break;
      }
      case 'exit':
        this.flushPendingExec(rec.pid, events);
        this.onExit(rec, nowMs);
        break;
      case 'thread-exit': {
        // Its last chunks may still come through another CPU's buffer: wait for them (or the finalize).
        for (const [key, io] of this.ioByTid) if (io.tid === rec.tid && io.buf.complete()) this.commitIo(key);
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
      case 'extack':
      case 'netlink-send':
      case 'netlink-chunk':
      case 'netlink-ack':
      case 'link-name':
      case 'sysctl-open':
      case 'sysctl-write':
        this.attachKernel(rec);
        break;
      case 'lost':
        this.counters.lostEvents += rec.count;
        for (const call of this.calls.values()) call.lostRecords = true;
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
    for (const [id, l] of this.lingering) if (nowMs - l.since >= OUTLIVED_TTL_MS) this.releaseLingering(id);
    for (const [pid, early] of this.early) {
      if (nowMs - early.since < EARLY_RECORDS_TTL_MS) continue;
      this.early.delete(pid);
      this.counters.orphanChunks += early.ios.length + early.forks.length + (early.exit ? 1 : 0);
    }
    this.ioTally.sweep(nowMs);
    for (const [pid, at] of this.lostBeforeExec) if (nowMs - at >= EARLY_RECORDS_TTL_MS) this.lostBeforeExec.delete(pid);
    for (const id of this.publishable(nowMs)) events.push(this.finalize(id, this.calls.get(id)!));
    return this.withRepublished(events);
  }

  /**
   * The calls to publish now, delegates before the plugin that ran them: a
   * call's grace period has passed and the payload records its processes'
   * exits announced are in (or IO_WAIT_MS more have passed: then it is
   * marked lostRecords). A delegate ends before its plugin but may still wait
   * for its records; the plugin waits for it, so no reader sees a finished
   * call whose delegate still looks running.
   */
  private publishable(nowMs: number): string[] {
    const ready = new Set<string>();
    const blocked = new Set<string>();
    for (const [id, call] of this.calls) {
      const due = call.finalizeDueMs !== null && call.finalizeDueMs <= nowMs;
      if (due && !call.lostRecords && this.missingIo(call)) {
        // Payload records its exits announced are still on their way (a CPU buffer bpftrace drains late).
        if (nowMs - call.finalizeDueMs! < IO_WAIT_MS) {
          if (call.base.parentId !== null) blocked.add(call.base.parentId);
          continue;
        }
        call.lostRecords = true;
      }
      // A helper whose exit has not come may have ended already, its exit (and the count of its writes to the
      // call's stdout) still in another CPU's buffer: it gets a moment; one that really runs on is a lingering
      // descendant, and the call is published without it.
      if (due && !call.lostRecords && nowMs - call.finalizeDueMs! < DESCENDANT_EXIT_WAIT_MS && this.hasLiveDescendant(id, call)) {
        if (call.base.parentId !== null) blocked.add(call.base.parentId);
        continue;
      }
      if (due) ready.add(id);
      else if (call.endedAtUs !== null && call.base.parentId !== null) blocked.add(call.base.parentId);
    }
    // A blocked call blocks its own plugin in turn.
    for (let changed = true; changed; ) {
      changed = false;
      for (const id of blocked) {
        const parentId = this.calls.get(id)?.base.parentId;
        if (ready.delete(id)) changed = true;
        if (parentId != null && !blocked.has(parentId)) {
          blocked.add(parentId);
          changed = true;
        }
      }
    }
    const readyChildren = new Map<string, string[]>();
    for (const id of ready) {
      const parentId = this.calls.get(id)!.base.parentId;
      if (parentId !== null && ready.has(parentId)) readyChildren.set(parentId, [...(readyChildren.get(parentId) ?? []), id]);
    }
    const order: string[] = [];
    const placed = new Set<string>();
    const place = (id: string): void => {
      if (placed.has(id)) return;
      placed.add(id);
      for (const childId of readyChildren.get(id) ?? []) place(childId);
      order.push(id);
    };
    for (const id of ready) place(id);
    return order;
  }

  /** Whether a process of the call exited with payload records announced that have not all come. */
  private missingIo(call: CallState): boolean {
    for (const pid of call.pids) if (this.ioTally.missing(pid) > 0) return true;
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
    for (const pid of [...this.pendingExecs.keys()]) this.flushPendingExec(pid, events);
    for (const [id, call] of this.calls) {
      if (call.endedAtUs === null) call.incompleteReason = reason;
      events.push(this.finalize(id, call));
    }
    for (const id of [...this.lingering.keys()]) this.releaseLingering(id);
    this.procs.clear();
    this.outlived.clear();
    this.ioByTid.clear();
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
    return {
      procs: this.procs.size,
      calls: this.calls.size,
      pendingExecs: this.pendingExecs.size,
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
  markLostRecords(pid: number): void {
    const callId = this.procs.get(pid)?.callId;
    const call = callId ? this.calls.get(callId) : undefined;
    if (call) call.lostRecords = true;
    else this.lostBeforeExec.set(pid, this.now);
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
    if (pending && pending.block.complete() && (pending.env === null || pending.env.complete())) this.flushPendingExec(pid, events);
  }

  /** Completes an exec record, with whatever chunks arrived. */
  private flushPendingExec(pid: number, events: CollectorEvent[]): void {
    const pending = this.pendingExecs.get(pid);
    if (!pending) return;
    this.pendingExecs.delete(pid);
    const rec = pending.record;
    const decoded = decodeExecBlock(pending.block, rec.argBytes, pending.env);
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
    let existing = this.procs.get(rec.pid);
    if (existing && existing.role !== 'foreign' && existing.start === null && existing.ppid !== rec.ppid && this.parentLives(existing)) {
      // A stale fork entry (a thread's clone whose end was not seen) under a pid now used by another process.
      // (A child whose parent is gone was re-parented: its fork entry is right.)
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
    const parent = existing ?? this.procs.get(rec.ppid);
    if (parent?.role === 'foreign') {
      this.procs.set(rec.pid, foreignProc(rec.pid, rec.ppid));
      this.early.delete(rec.pid);
      return;
    }
    const parentCallId = parent?.callId ?? null;
    if (parentCallId === null && (!this.acceptsNewCalls || (this.opts.admitTopLevel && !this.opts.admitTopLevel(rec.ppid)))) return;
    const startedAtUs = this.opts.monoToEpochUs(rec.ts);
    const { filename, cut: pathCut } = pending.path.filename(rec.path);
    // A relative path (`./host-local`, a relative CNI_PATH entry) made absolute: where it lies decides whether it is a call.
    const cwd = pending.path.cwd();
    const execPath = resolveExecPath(filename || decoded.argv[0] || '', cwd);
    const inCniPath = isInCniPath(execPath, decoded.env.CNI_PATH, cwd);
    const plugin = existing?.role === 'plugin' && existing.callId !== null ? this.callFor(existing.callId) : undefined;
    if (plugin && plugin.base.pid === rec.pid) {
      // The plugin process exec'd another image in place: the same process, the same pipes, the same call.
      if (!plugin.execTimes.includes(rec.ts)) this.execInPlace(plugin, rec, { execPath, pathCut }, decoded, inCniPath, startedAtUs);
      else this.counters.duplicateExecs++;
      existing!.start = rec.start;
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
      if (this.lostBeforeExec.delete(rec.pid)) call.lostRecords = true;
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
    this.replayEarly(rec.pid, rec.ts, rec.start);
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
    if (this.canaryPids.delete(rec.pid)) {
      this.ioTally.forget(rec.pid);
      return;
    }
    const proc = this.procs.get(rec.pid);
    if (!proc) {
      this.earlyFor(rec.pid).exit = rec;
      return;
    }
    if (proc.role === 'foreign') {
      this.procs.delete(rec.pid);
      this.ioTally.forget(rec.pid);
      return;
    }
    this.ioTally.exited(rec.pid, rec.ioRecords, nowMs);
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
        call.exitTs = rec.ts;
        call.outcome = outcome;
        call.finalizeDueMs = nowMs + this.graceMs;
      }
    }
    // A helper or fork that outlived its call's publication: nothing will ever clear it but this.
    if (proc.callId === null || !this.calls.has(proc.callId)) {
      this.procs.delete(rec.pid);
      this.ioTally.forget(rec.pid);
      this.outlived.delete(rec.pid);
      if (proc.callId !== null) {
        // A helper's row ends with it (no "running" helper left behind in a published call).
        if (proc.role === 'helper') this.touchLingering(proc.callId);
        this.descendantEnded(proc.callId);
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
    if (l.changed) this.republished.push({ type: 'call.finished', call: snapshotCall(l.call) });
  }

  /** Moves a finished read/write (by its ioKey) into the stream it belongs to. */
  private commitIo(key: number): void {
    const io = this.ioByTid.get(key);
    if (!io) return;
    this.ioByTid.delete(key);
    this.fileIo(io);
  }

  private fileIo(io: IoInFlight): void {
    if (this.canaryPids.has(io.pid)) {
      this.checkCanaryPayload(io);
      return;
    }
    const proc = this.procs.get(io.pid);
    if (!proc) {
      this.earlyFor(io.pid).ios.push(io);
      return;
    }
    if (proc.role === 'foreign') return;
    const call = proc.callId ? this.callFor(proc.callId) : undefined;
    if (!call) {
      this.counters.orphanChunks++;
      return;
    }
    this.touchLingering(call.base.id);
    const isMain = proc.role === 'plugin' && call.base.pid === proc.pid;
    const stream = this.streamFor(call, proc, io, isMain);
    if (stream && io.uncaptured) call.uncapturedIo++;
    stream?.add(io.ts, this.seq++, io.buf.bytes(), io.buf.length, io.buf.complete());
  }

  /**
   * Whose stream a read or write is: the open file decides, not the fd
   * number. Helpers and subshells share the plugin's files, a shell
   * redirects its own fds (`>&2`, `< file`), and a plugin may keep a dup of
   * stdout on fd 3 after pointing fd 1 at stderr; a helper's own
   * `>/dev/null` is another file than the plugin's /dev/null. When stdout
   * and stderr are one file, the fd used (2 or not) tells them apart.
   */
  private streamFor(call: CallState, proc: Proc, io: IoInFlight, isMain: boolean): StreamCapture | null {
    const files = call.stdioFiles;
    if (io.kind === 'read') {
      if (io.file === files[0] && io.file !== '0') return call.stdin;
    } else if (io.file !== '0') {
      if (call.base.stdioShared && io.file === files[1]) return io.fd === 2 ? call.stderr : call.stdout;
      if (io.file === files[1]) return call.stdout;
      if (io.file === files[2]) return call.stderr;
    }
    // The exec saw no file on that fd: the plugin's own fd is all there is to go by.
    if (isMain && io.fd <= 2 && files[io.fd] === '0' && (io.kind === 'read') === (io.fd === 0)) return [call.stdin, call.stdout, call.stderr][io.fd]!;
    if (proc.role === 'helper' && proc.helper && io.kind === 'write') {
      if (io.fd === 1) return proc.helper.stdout;
      if (io.fd === 2) return proc.helper.stderr;
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
    this.shimCalls.delete(id);
    this.recentIds.add(id);
    if (this.recentIds.size > RECENT_IDS) this.recentIds.delete(this.recentIds.values().next().value!);
    let outlivedBy = 0;
    for (const pid of call.pids) {
      const proc = this.procs.get(pid);
      if (proc?.callId !== id) continue;
      if (proc.exited || proc.pid === call.base.pid) {
        this.procs.delete(pid);
        this.ioTally.forget(pid);
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

/** A read or write in flight, by thread and by the CPU buffer its chunks come through. */
function ioKey(tid: number, cpu: number | undefined): number {
  return tid + (cpu ?? 0) * TID_SPACE;
}

/**
 * The calls the assembler holds, open and finished lately, and their
 * events: a call finishes (call.finished) when finish-order.ts says nothing
 * known is outstanding; one whose descendants still run lingers and is
 * updated (call.updated), once, when they end; one a loss or a late record
 * turns out to concern after it finished is updated, marked or with the
 * bytes. What finished is remembered a while for that.
 */

import { markLost, snapshotCall, type CallState, type Proc } from './call-state.js';
import { LossWindows, overlaps, type LossWindow } from './loss-windows.js';
import { PidIndex } from './pid-index.js';
import { finishOrder } from './finish-order.js';
import { SOCKET_SHIM_PLUGINS } from './socket-shims.js';
import { OUTLIVED_TTL_MS, type ProcessTable } from './process-table.js';
import type { EarlyRecordStore } from './early-records.js';
import type { AssemblyContext } from './assembly-context.js';
import type { IoTally } from './io-tally.js';
import type { LostRecordsCause } from '../types.js';

/**
 * How long (ms) a loss is remembered, and a published call kept to be marked
 * by one: well past the longest a record lags behind (a loss is reported
 * when its CPU buffer is read, which is when the records around it arrive).
 */
const LOSS_MEMORY_MS = 60_000;
/** Ids of published calls remembered, so an exec record seen again after its call ended is not a second call. */
const RECENT_IDS = 4096;

export class CallRegistry {
  private readonly calls = new Map<string, CallState>();
  /** The open calls of socket shims, apart: every new top-level call looks for its shim among them, not among all calls. */
  private readonly shimCalls = new Map<string, CallState>();
  /** Ids of the last calls finished (a bounded set, oldest forgotten first). */
  private readonly recentIds = new RecentIds(RECENT_IDS);
  /**
   * Calls published while descendants of their plugin still ran (a daemon it
   * started, `( sleep 3; echo late >&2 ) &`). What those do next (helpers,
   * their exits, output after the plugin's exit) still belongs to the call,
   * which is published again, once, when the last of them ends (or after
   * OUTLIVED_TTL_MS). `changed`: something new to publish.
   */
  private readonly lingering = new Map<string, { call: CallState; since: number; changed: boolean }>();
  /** Spans of kernel time (µs) in which a tracer lost records, remembered for a while (see recordsLost). */
  private readonly lossWindows = new LossWindows();
  /** Calls published lately: a loss reported after their publication still marks them (published again). */
  private readonly recentlyFinished = new Map<string, { call: CallState; atMs: number }>();
  /** recentlyFinished by plugin pid (lateChildOf), and the top-level calls, open or recently published, by their ppid (adoptable). */
  private readonly publishedByPid = new PidIndex();
  private readonly topLevelByPpid = new PidIndex();

  constructor(
    private readonly ctx: AssemblyContext,
    private readonly procs: ProcessTable,
    private readonly ioTally: IoTally<Proc>,
    private readonly early: EarlyRecordStore,
  ) {}

  get openCount(): number {
    return this.calls.size;
  }

  openCalls(): IterableIterator<[string, CallState]> {
    return this.calls.entries();
  }

  open(id: string): CallState | undefined {
    return this.calls.get(id);
  }

  isOpen(id: string): boolean {
    return this.calls.has(id);
  }

  /** The open call, or the published one whose descendants still run. */
  callFor(id: string): CallState | undefined {
    return this.calls.get(id) ?? this.lingering.get(id)?.call;
  }

  /** A call published lately (still to be marked by a loss, or adopted). */
  recent(id: string): CallState | undefined {
    return this.recentlyFinished.get(id)?.call;
  }

  /** Whether a call of this id is open or was published lately: an exec seen again is not a second call. */
  isKnown(id: string): boolean {
    return this.calls.has(id) || this.recentIds.has(id);
  }

  /**
   * The fork entry of process `pid` if it exited, and its parent's call was
   * published, before its exec came (its exec through a CPU buffer read
   * later): the exec is that process's, and its exit ends what it becomes.
   * Its reads and writes came before publication too (counted, kept for the
   * exec): nothing more is waited for.
   */
  takeExitedFork(pid: number, start: string): Proc | undefined {
    const proc = this.procs.remembered(pid);
    if (!proc || proc.role !== 'fork' || proc.start !== start || !proc.exited || proc.callId === null || !this.recentlyFinished.has(proc.callId)) return undefined;
    this.procs.unremember(pid);
    return proc;
  }

  /** The top-level calls, open or published lately, that process `ppid` started. */
  topLevelOf(ppid: number): readonly string[] {
    return this.topLevelByPpid.get(ppid);
  }

  /** No longer a top-level call of `ppid` to look at (adopted, or gone). */
  forgetTopLevel(ppid: number, id: string): void {
    this.topLevelByPpid.remove(ppid, id);
  }

  shims(): IterableIterator<CallState> {
    return this.shimCalls.values();
  }

  /** A call whose plugin's image may have changed (an exec in place): a socket shim or not. */
  updateShim(call: CallState): void {
    if (SOCKET_SHIM_PLUGINS.has(call.base.plugin)) this.shimCalls.set(call.base.id, call);
    else this.shimCalls.delete(call.base.id);
  }

  /** A new call, open from now on. */
  add(call: CallState): void {
    this.calls.set(call.base.id, call);
    if (call.base.parentId === null) this.topLevelByPpid.add(call.base.ppid, call.base.id);
    if (SOCKET_SHIM_PLUGINS.has(call.base.plugin)) this.shimCalls.set(call.base.id, call);
  }

  /**
   * Marks the call `pid` works for as having lost records (the tracer that
   * captured its payloads died under it). A process whose exec has not come
   * yet (another CPU's buffer) is remembered with the records that came
   * before it (EarlyRecordStore), and its call marked when it does.
   */
  markLostRecords(pid: number, why: LostRecordsCause): void {
    const callId = this.procs.get(pid)?.callId;
    const call = callId ? this.calls.get(callId) : undefined;
    if (call) markLost(call, why);
    // A process whose call went out already is no process whose exec is still to come.
    else if (!this.procs.remembered(pid)) this.early.markLost(pid, why, this.ctx.nowMs);
  }

  /** A loss without a time (an older tracer's notice): every call open now may be hit. */
  markAllOpen(why: LostRecordsCause): void {
    for (const call of this.calls.values()) markLost(call, why);
  }

  /** A tracer lost records in `window`: every call alive in it is marked, those published lately published again. */
  recordsLost(window: LossWindow, nowMs: number): void {
    this.lossWindows.add(window, nowMs);
    for (const call of this.calls.values()) if (overlaps(call, window)) markLost(call, 'tracer-lost');
    for (const l of this.lingering.values()) if (overlaps(l.call, window) && !l.call.lostRecords) {
      markLost(l.call, 'tracer-lost');
      l.changed = true;
    }
    for (const [id, p] of this.recentlyFinished) {
      if (p.call.lostRecords || this.lingering.has(id) || !overlaps(p.call, window)) continue;
      markLost(p.call, 'tracer-lost');
      this.ctx.emit({ type: 'call.updated', call: snapshotCall(p.call) });
    }
  }

  /** A published call's descendants did something that changes it: it is published again when they are done. */
  touch(id: string): void {
    const l = this.lingering.get(id);
    if (l) l.changed = true;
  }

  /** A published call changed: published again now, or when its descendants are done if they still run. */
  update(call: CallState): void {
    const l = this.lingering.get(call.base.id);
    if (l) l.changed = true;
    else this.ctx.emit({ type: 'call.updated', call: snapshotCall(call) });
  }

  /** A descendant of a published call ended: when it was the last, the call is published once more if it changed. */
  descendantEnded(id: string): void {
    const l = this.lingering.get(id);
    if (l && !this.procs.hasLiveDescendant(id, l.call)) this.release(id);
  }

  /**
   * The published call whose plugin process `ppid` was, running at `ts`:
   * its child's exec came after it was published (a CPU buffer drained later
   * than the reorder window allowed for). The child is still its delegate or
   * helper, and the call is published again once it ends.
   */
  lateChildOf(ppid: number, ts: number): string | null {
    for (const id of this.publishedByPid.get(ppid)) {
      const p = this.recentlyFinished.get(id);
      if (!p) {
        this.publishedByPid.remove(ppid, id);
        continue;
      }
      const c = p.call;
      if (c.base.pid !== ppid || c.execTimes[0]! > ts || (c.exitTs !== null && ts > c.exitTs)) continue;
      const l = this.lingering.get(id);
      if (l) l.changed = true;
      else this.lingering.set(id, { call: c, since: this.ctx.nowMs, changed: true });
      return id;
    }
    return null;
  }

  /** A process whose pid was reused before its exit came: its call, if it was the plugin, ends incomplete. */
  retire(proc: Proc, reason: string): void {
    this.procs.delete(proc.pid);
    if (proc.role !== 'plugin' || !proc.callId) return;
    const call = this.calls.get(proc.callId);
    if (call && call.base.pid === proc.pid && call.endedAtUs === null) {
      call.incompleteReason = reason;
      this.finish(proc.callId, call);
    }
  }

  /** Finishes the ended calls nothing known is outstanding for, in finish-order.ts's order; `heldFromTs`: see CallAssembler.tick. */
  finishDue(nowMs: number, heldFromTs: number): void {
    // The calls a process of which waits for announced records: one pass over the tally, not one per call.
    const awaitingIo = new Set<string>();
    for (const proc of this.ioTally.waiting()) if (proc.callId !== null) awaitingIo.add(proc.callId);
    const waits = {
      missingIo: (c: CallState) => awaitingIo.has(c.base.id),
      hasLiveDescendant: (id: string, c: CallState) => this.procs.hasLiveDescendant(id, c),
      recordsHeld: (c: CallState) => c.exitTs !== null && c.exitTs >= heldFromTs,
    };
    for (const id of finishOrder(this.calls, nowMs, waits)) this.finish(id, this.calls.get(id)!);
  }

  /** The daemon found the plugin process gone without its exit record: its call ends. */
  processGone(pid: number, start: string, reason: string): void {
    for (const [id, call] of this.calls) {
      if (call.base.pid === pid && call.start === start && call.endedAtUs === null) {
        call.incompleteReason = reason;
        this.finish(id, call);
        return;
      }
    }
  }

  /** Ends every open call (those still running incomplete) and lets every lingering one go; returns how many ended incomplete. */
  endAll(reason: string): number {
    let incomplete = 0;
    for (const [id, call] of this.calls) {
      if (call.endedAtUs === null) {
        call.incompleteReason = reason;
        incomplete++;
      }
      this.finish(id, call);
    }
    for (const id of [...this.lingering.keys()]) this.release(id);
    return incomplete;
  }

  /** Lets lingering calls go after OUTLIVED_TTL_MS, and forgets losses and publications past LOSS_MEMORY_MS. */
  sweep(nowMs: number): void {
    for (const [id, l] of this.lingering) if (nowMs - l.since >= OUTLIVED_TTL_MS) this.release(id);
    this.lossWindows.forget(nowMs, LOSS_MEMORY_MS);
    for (const [id, p] of this.recentlyFinished) {
      if (nowMs - p.atMs < LOSS_MEMORY_MS) break;
      this.recentlyFinished.delete(id);
      this.publishedByPid.remove(p.call.base.pid, id);
      this.topLevelByPpid.remove(p.call.base.ppid, id);
    }
  }


  private release(id: string): void {
    const l = this.lingering.get(id);
    if (!l) return;
    this.lingering.delete(id);
    if (l.changed) this.ctx.emit({ type: 'call.updated', call: snapshotCall(l.call) });
  }

  private finish(id: string, call: CallState): void {
    const now = this.ctx.nowMs;
    this.calls.delete(id);
    this.shimCalls.delete(id);
    if (this.lossWindows.hit(call)) markLost(call, 'tracer-lost');
    if (call.lostWhy !== null) this.ctx.counters.callsMarked[call.lostWhy]++;
    this.recentlyFinished.set(id, { call, atMs: now });
    this.publishedByPid.add(call.base.pid, id);
    this.recentIds.add(id);
    let outlivedBy = 0;
    for (const pid of call.pids) {
      const proc = this.procs.get(pid);
      if (proc?.callId !== id) continue;
      if (proc.exited || proc.pid === call.base.pid) {
        this.procs.delete(pid);
        this.ioTally.forget(proc);
        if (proc.exited && proc.exitTs !== undefined) this.procs.remember(proc, now);
      } else {
        this.procs.outlive(proc, now);
        outlivedBy++;
      }
    }
    if (outlivedBy > 0 && call.incompleteReason === null) this.lingering.set(id, { call, since: now, changed: false });
    this.ctx.counters.callsFinished++;
    this.ctx.emit({ type: 'call.finished', call: snapshotCall(call) });
  }
}

/**
 * The last `size` ids added, in a ring: the oldest goes as a new one comes,
 * without walking a Set from its start (whose deleted slots V8 skips one by
 * one until it rehashes: a finish per call made that quadratic).
 */
class RecentIds {
  private readonly ring: Array<string | undefined>;
  private readonly set = new Set<string>();
  private next = 0;

  constructor(size: number) {
    this.ring = new Array<string | undefined>(size);
  }

  add(id: string): void {
    if (this.set.has(id)) return;
    const oldest = this.ring[this.next];
    if (oldest !== undefined) this.set.delete(oldest);
    this.ring[this.next] = id;
    this.next = (this.next + 1) % this.ring.length;
    this.set.add(id);
  }

  has(id: string): boolean {
    return this.set.has(id);
  }
}

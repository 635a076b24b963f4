/**
 * Forks and exits: a fork adds a process to its parent's call, an exit ends
 * a helper, a plugin's call (due for publication) or a descendant that
 * outlived its call. Records that came before their process was known wait
 * in EarlyRecordStore and are replayed here once it is.
 */

import { decodeWaitStatus } from './wait-status.js';
import type { AssemblyContext } from './assembly-context.js';
import type { CallRegistry } from './call-registry.js';
import type { CanaryWatch } from './canary-watch.js';
import type { Proc } from './call-state.js';
import type { EarlyRecordStore } from './early-records.js';
import type { IoRouter } from './io-routing.js';
import type { IoTally } from './io-tally.js';
import type { ProcessTable } from './process-table.js';
import type { TracerFrame } from '../../bpf/index.js';

/**
 * How long (kernel µs) after its process's exit a thread's end may be dated:
 * a thread that dropped the process's live count before the last one may
 * reach its exit probe after that one printed the exit.
 */
const THREAD_END_AFTER_EXIT_US = 10_000;

export class ProcessLifecycle {
  private readonly graceMs: number;

  constructor(
    private readonly ctx: AssemblyContext,
    private readonly procs: ProcessTable,
    private readonly registry: CallRegistry,
    private readonly ioTally: IoTally<Proc>,
    private readonly early: EarlyRecordStore,
    private readonly io: IoRouter,
    private readonly canaries: CanaryWatch,
  ) {
    this.graceMs = ctx.opts.finalizeGraceMs ?? 0;
  }

  fork(ppid: number, pid: number, ts?: number): void {
    const parent = this.procs.at(ppid, ts);
    if (!parent) {
      this.early.for(ppid, this.ctx.nowMs).forks.push({ pid, ts });
      return;
    }
    this.ioTally.clone(parent, false, this.ctx.nowMs);
    const existing = this.procs.get(pid);
    // The child's exec may have been delivered first (another CPU's buffer); keep what it said. Its exit too:
    // a fork dated before the exit of the process it names is that process's own fork, not a new process's.
    if (existing && (!existing.exited || (ts !== undefined && existing.ppid === ppid && existing.exitTs !== undefined && ts < existing.exitTs))) {
      // Unless it is a fork entry whose end was not seen (a thread's), and this a later fork of a new task.
      const stale = existing.start === null && existing.forkTs !== undefined && ts !== undefined && ts > existing.forkTs;
      if (!stale) return;
    }
    // The late fork record of a process whose call is published already (dated before its exit): no new process.
    const published = this.procs.remembered(pid);
    if (published && ts !== undefined && published.exitTs !== undefined && ts < published.exitTs) return;
    // A new process under this pid (a new entry: nothing counted for an earlier one counts for it).
    this.procs.set({ pid, ppid, start: null, callId: parent.callId, role: 'fork', helper: null, exited: false, payloadSrc: parent.payloadSrc, ...(ts !== undefined ? { forkTs: ts } : {}), ...(parent.fds ? { fds: new Map(parent.fds) } : {}) });
    if (parent.callId) this.registry.callFor(parent.callId)?.pids.add(pid);
    this.replayEarly(pid, null, null);
  }

  exit(rec: Extract<TracerFrame, { kind: 'exit' }>, nowMs: number): void {
    if (this.canaries.exited(rec.pid)) return;
    const proc = this.procs.get(rec.pid);
    if (!proc) {
      this.early.for(rec.pid, this.ctx.nowMs).exit = rec;
      return;
    }
    if (proc.start !== null && proc.start !== rec.start) return;
    this.ioTally.exited(proc, rec.ioRecords, rec.clones, nowMs);
    proc.start = rec.start;
    proc.exited = true;
    proc.exitTs = rec.ts;
    proc.outcome = decodeWaitStatus(rec.exitCode, rec.groupExitCode, rec.signalFlags);
    this.endWith(proc, nowMs);
    // A helper or fork that outlived its call's publication: nothing will ever clear it but this.
    if (proc.callId === null || !this.registry.isOpen(proc.callId)) {
      this.procs.delete(rec.pid);
      this.ioTally.forget(proc);
      this.procs.forgetOutlived(rec.pid);
      // Remembered for what comes late of it; a fork whose exec may still come (another CPU's buffer): that exec takes it up (ExecAssembly).
      if (proc.callId !== null && this.registry.recent(proc.callId)) this.procs.remember(proc, nowMs);
      if (proc.callId !== null) {
        // A helper's row ends with it (no "running" helper left behind in a published call).
        if (proc.role === 'helper') this.registry.touch(proc.callId);
        this.registry.descendantEnded(proc.callId);
      }
    }
  }

  /**
   * An exited process's exit ends its helper's row, or its call when it is
   * the call's plugin process: at its exit, or at its exec when the exit came
   * first (its exec through a CPU buffer read later, the exit applied to its
   * fork entry).
   */
  endWith(proc: Proc, nowMs: number): void {
    if (!proc.exited || proc.exitTs === undefined || proc.outcome === undefined) return;
    const endedAtUs = this.ctx.opts.monoToEpochUs(proc.exitTs);
    if (proc.role === 'helper' && proc.helper) {
      proc.helper.endedAtUs = endedAtUs;
      proc.helper.outcome = proc.outcome;
    }
    if (proc.role === 'plugin' && proc.callId) {
      const call = this.registry.open(proc.callId);
      if (call && call.base.pid === proc.pid && call.endedAtUs === null) {
        call.endedAtUs = endedAtUs;
        call.exitTs = proc.exitTs;
        call.outcome = proc.outcome;
        call.finalizeDueMs = nowMs + this.graceMs;
      }
    }
  }

  /**
   * Process `pid` cloned thread `tid` (the tracer marks it): no process of its
   * own (its records are its process's), but one of the tasks its process's
   * ends announce, and a thread whose end, with its counts, is then awaited.
   */
  thread(pid: number, tid: number, ts: number): void {
    const proc = this.procs.at(pid, ts);
    if (proc) this.ioTally.clone(proc, true, this.ctx.nowMs);
    else if (!this.canaries.has(pid)) this.early.for(pid, this.ctx.nowMs).forks.push({ pid: tid, ts, thread: true });
  }

  threadExit(rec: Extract<TracerFrame, { kind: 'thread-exit' }>, nowMs: number): void {
    const tid = rec.tid;
    // The payload records it printed are its process's too: the call waits for them as for its exit's count.
    // (Dated against the process's exit with a margin: a thread still ending as the last one exits prints after it.)
    if (rec.pid !== undefined && rec.ts !== undefined && rec.ioRecords !== undefined && !this.canaries.has(rec.pid)) {
      const ended = { tid, ts: rec.ts, ioRecords: rec.ioRecords, clones: rec.clones };
      const owner = this.procs.get(rec.pid);
      const published = this.procs.remembered(rec.pid)?.exitTs;
      if (owner && startedBefore(rec, owner)) {
        // A thread of an earlier process with this pid, long done with.
        this.ctx.counters.unattributed++;
      } else if (owner && !endedPast(rec, owner)) {
        this.ioTally.threadEnded(owner, ended, nowMs);
      }
      // A published process's own thread (its records, should any come, go in late), else the pid's next process's.
      else if (published === undefined || rec.ts > published + THREAD_END_AFTER_EXIT_US) this.early.for(rec.pid, this.ctx.nowMs).threadEnds.push(ended);
    }
    // A clone() of a thread looks like a fork to the tracer; drop that phantom.
    const proc = this.procs.get(tid);
    if (proc && proc.role === 'fork' && proc.start === null) {
      this.procs.delete(tid);
      this.procs.forgetOutlived(tid);
      if (proc.callId !== null) this.registry.descendantEnded(proc.callId);
    }
  }

  /** The process is known now: what arrived before its exec (at `execTs`) or fork applies to it. */
  replayEarly(pid: number, execTs: number | null, start: string | null): void {
    const early = this.early.take(pid);
    if (!early) return;
    for (const child of early.forks) {
      if (child.thread === true) this.thread(pid, child.pid, child.ts!);
      else this.fork(pid, child.pid, child.ts);
    }
    for (const io of early.ios) {
      if (execTs === null || io.ts >= execTs) this.io.file(io);
      else this.ctx.counters.unattributed++;
    }
    const proc = this.procs.get(pid);
    if (proc) for (const t of early.threadEnds) this.ioTally.threadEnded(proc, t, this.ctx.nowMs);
    if (early.exit && (start === null || early.exit.start === start)) this.exit(early.exit, this.ctx.nowMs);
  }
}

/** A thread's end that names a thread started before the process did: an earlier process's with that pid. */
function startedBefore(end: { start?: string }, proc: Proc): boolean {
  return end.start !== undefined && proc.start !== null && BigInt(end.start) < BigInt(proc.start);
}

/** A thread's end dated past the process's exit by more than a thread can trail it: the pid's next process's. */
function endedPast(end: { ts?: number }, proc: Proc): boolean {
  return end.ts !== undefined && proc.exited && proc.exitTs !== undefined && end.ts > proc.exitTs + THREAD_END_AFTER_EXIT_US;
}

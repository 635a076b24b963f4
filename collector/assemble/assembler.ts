/**
 * The assemble stage: tracer frames into CNI calls, exec → stdin/stdout/
 * stderr → exit, with delegated plugin calls linked to their parent call and
 * helper processes to the call they work for. Pure: no I/O, no clock of its
 * own (callers pass `nowMs`), so it can be replayed from recorded tracer
 * output; its events go to `emit` as they happen.
 *
 * A dispatcher: each frame goes to the part whose job it is —
 * exec-assembly.ts (what an exec means: a call, a helper, an exec in place),
 * process-lifecycle.ts (forks, exits, thread ends), io-routing.ts (which
 * call or helper stream a read or write goes to), call-registry.ts (open and
 * lately finished calls: when one finishes, and is updated) — over one
 * process table (process-table.ts) and one store of what came before what
 * it belongs to (early-records.ts).
 */

import { copyFd, type CallState, type Proc } from './call-state.js';
import { CallRegistry } from './call-registry.js';
import { CanaryWatch } from './canary-watch.js';
import { EarlyRecordStore } from './early-records.js';
import { ExecAssembly } from './exec-assembly.js';
import { IoRouter } from './io-routing.js';
import { IoTally } from './io-tally.js';
import { ProcessLifecycle } from './process-lifecycle.js';
import { ProcessTable } from './process-table.js';
import { newCounters, type AssemblerCounters, type AssemblerOptions, type AssemblyContext } from './assembly-context.js';
import { isKernelFrame, type KernelFrame, type TracerFrame } from '../../bpf/index.js';
import type { LossWindow } from './loss-windows.js';
import type { CollectorEvent, LostRecordsCause } from '../types.js';

export { callId } from './call-state.js';
export type { AssemblerCounters, AssemblerOptions } from './assembly-context.js';
export type { LossWindow } from './loss-windows.js';

export interface AssemblerHeldState {
  /** Processes followed (live, or exited but part of a call still open). */
  readonly procs: number;
  /** Calls not yet published as finished. */
  readonly calls: number;
  /** Execs waiting for the exec of their traced parent. */
  readonly awaitingParent: number;
  /** Records waiting for the exec or fork of their process. */
  readonly earlyRecords: number;
}

export class CallAssembler {
  readonly counters: AssemblerCounters;
  private readonly ctx: AssemblyContext;
  /** Each process's payload records against the count its exit announced. */
  private readonly ioTally = new IoTally<Proc>();
  private readonly early = new EarlyRecordStore();
  private readonly canaries: CanaryWatch;
  private readonly registry: CallRegistry;
  private readonly io: IoRouter;
  private readonly lifecycle: ProcessLifecycle;
  private readonly execs: ExecAssembly;

  /**
   * `procs`: the record path's one process table, which the merger reads too
   * (its payload epochs say in which mode new calls are recorded); one of its
   * own, in the options' capture mode, when the assembler runs alone.
   */
  constructor(
    opts: AssemblerOptions,
    /** Where the calls' events go as they happen (call.started, call.finished, call.updated). */
    emit: (event: CollectorEvent) => void,
    private readonly procs = new ProcessTable({ src: null, mode: opts.captureMode ?? 'full' }),
  ) {
    this.counters = newCounters();
    this.ctx = { opts, counters: this.counters, emit, nowMs: 0 };
    this.canaries = new CanaryWatch();
    this.registry = new CallRegistry(this.ctx, this.procs, this.ioTally, this.early);
    this.io = new IoRouter(this.ctx, this.procs, this.registry, this.ioTally, this.early, this.canaries);
    this.lifecycle = new ProcessLifecycle(this.ctx, this.procs, this.registry, this.ioTally, this.early, this.io, this.canaries);
    this.execs = new ExecAssembly(this.ctx, this.procs, this.registry, this.early, this.io, this.lifecycle, this.canaries);
  }

  /** Feeds one frame; the events it completes go out. */
  push(rec: TracerFrame, nowMs: number): void {
    this.ctx.nowMs = nowMs;
    this.counters.records++;
    // What a call did to the kernel: attached to its call, decoded when it is published.
    if (isKernelFrame(rec)) {
      this.attachKernel(rec);
      return;
    }
    switch (rec.kind) {
      case 'hello':
        // A tracer's own hello, read alone (the merger keeps them from the record flow's assembler): its mode from now on.
        this.procs.setMode(rec.mode, rec.ts);
        break;
      case 'exec':
        this.execs.exec(rec);
        break;
      case 'fork':
        if (rec.thread === true) this.lifecycle.thread(rec.ppid, rec.pid, rec.ts);
        else this.lifecycle.fork(rec.ppid, rec.pid, rec.ts);
        break;
      case 'read':
      case 'write':
        this.io.payload(rec);
        break;
      case 'uncaptured':
        this.io.uncaptured(rec);
        break;
      case 'fd-copy': {
        const proc = this.procs.get(rec.pid);
        if (!proc) {
          this.counters.unattributed++;
          break;
        }
        this.ioTally.record(proc, nowMs);
        copyFd(proc, rec.oldFd, rec.newFd);
        break;
      }
      case 'exit':
        this.lifecycle.exit(rec, nowMs);
        break;
      case 'thread-exit':
        this.lifecycle.threadExit(rec, nowMs);
        break;
      case 'lost':
        // Without the time it arrived at, the loss can be anywhere: every call open now may be hit.
        this.counters.lostEvents += rec.count;
        this.registry.markAllOpen('tracer-lost');
        break;
    }
  }

  /**
   * Finalizes calls whose grace period after exit has passed, and lets go of
   * what waited too long. `heldFromTs` (kernel µs): the oldest record not yet
   * handed on (held in order, or still being put together); a call whose exit
   * is not before it may still get records dated before its exit.
   */
  tick(nowMs: number, heldFromTs = Infinity): void {
    this.ctx.nowMs = Math.max(this.ctx.nowMs, nowMs);
    this.execs.expire(nowMs);
    this.procs.sweep(nowMs);
    this.registry.sweep(nowMs);
    this.ioTally.sweep(nowMs);
    this.registry.finishDue(nowMs, heldFromTs);
    // After publishing too: a read or write its publication let go may have come here (made after its process's exit).
    this.counters.unattributed += this.early.sweep(nowMs);
  }

  /** Whether a call that started before `epochUs` is not published yet (its bytes may still come from its tracer). */
  hasOpenCallStartedBefore(epochUs: number): boolean {
    for (const [, call] of this.registry.openCalls()) if (call.base.startedAtUs < epochUs) return true;
    return false;
  }

  /** The daemon found a traced plugin process gone without its exit record (lost, or tracer restarted). */
  processGone(pid: number, start: string, reason: string): void {
    this.registry.processGone(pid, start, reason);
  }

  /** Ends every open call, e.g. when the tracer stops: those still running become incomplete. Returns how many did. */
  endAllCalls(reason: string): number {
    this.execs.releaseWaiting();
    const incomplete = this.registry.endAll(reason);
    this.procs.clear();
    this.early.clear();
    this.ioTally.clear();
    return incomplete;
  }

  /** Running plugin processes, for the daemon's liveness sweep. */
  runningCalls(): Array<{ id: string; pid: number; start: string; startedAtUs: number }> {
    const out = [];
    for (const [id, call] of this.registry.openCalls()) {
      if (call.endedAtUs === null) out.push({ id, pid: call.base.pid, start: call.start, startedAtUs: call.base.startedAtUs });
    }
    return out;
  }

  get openCallCount(): number {
    return this.registry.openCount;
  }

  /** How much state the assembler holds now: what must not grow without bound, whatever the tracer sends. */
  heldState(): AssemblerHeldState {
    return {
      procs: this.procs.size,
      calls: this.registry.openCount,
      awaitingParent: this.early.awaitingParents,
      earlyRecords: this.early.count(),
    };
  }

  /**
   * Marks the call `pid` works for as having lost records (the tracer that
   * captured its payloads died under it). A process whose exec has not come
   * yet (another CPU's buffer) is remembered, and its call marked when it
   * does.
   */
  markLostRecords(pid: number, why: LostRecordsCause = 'payload-tracer-cut'): void {
    this.registry.markLostRecords(pid, why);
  }

  /**
   * A tracer lost `count` records somewhere in `window` (kernel µs; see
   * record-flow.ts for how it is bounded). Every call alive at any moment of
   * it is marked lostRecords: those open now, those whose exec is still on
   * its way (checked when they are published), and those published lately,
   * which are published again, marked.
   */
  recordsLost(count: number, window: LossWindow, nowMs: number): void {
    this.ctx.nowMs = Math.max(this.ctx.nowMs, nowMs);
    this.counters.lostEvents += count;
    this.registry.recordsLost(window, nowMs);
  }

  /** Every live process this assembler follows. */
  livePids(): number[] {
    return this.procs.livePids();
  }

  /**
   * A frame of what a process did to the kernel goes to its call as it is;
   * collector/changes decodes it when the call is published.
   */
  private attachKernel(rec: KernelFrame): void {
    const id = this.procs.get(rec.pid)?.callId;
    const call: CallState | undefined = id == null ? undefined : this.registry.callFor(id);
    if (!call) {
      this.counters.unattributed++;
      return;
    }
    if (call.netnsNames === null) {
      const podPath = call.base.netns;
      const opts = this.ctx.opts;
      call.netnsNames = { host: opts.hostNetnsInode ?? null, pod: podPath ? (opts.netnsInodeOf?.(podPath) ?? null) : null, podPath };
    }
    call.kernel.push({ atUs: this.ctx.opts.monoToEpochUs(rec.ts), rec });
  }
}

/**
 * Where a read or write goes: into a stream of the call (or helper) its
 * process works for (stream-routing.ts decides which), into a call published
 * already when it comes late (published again), to the records waiting for
 * their process's exec or fork, or kept for what a forked process execs
 * next.
 */

import { streamFor } from './stream-routing.js';
import type { EarlyRecordStore } from './early-records.js';
import { ioOf, type IoInFlight } from './io-in-flight.js';
import type { PayloadFrame, TracerFrame } from '../../bpf/index.js';
import type { AssemblyContext } from './assembly-context.js';
import type { CallRegistry } from './call-registry.js';
import type { CanaryWatch } from './canary-watch.js';
import type { Proc } from './call-state.js';
import type { IoTally } from './io-tally.js';
import type { ProcessTable } from './process-table.js';

export class IoRouter {
  /** Orders a stream's pieces that share a timestamp. */
  private seq = 0;

  constructor(
    private readonly ctx: AssemblyContext,
    private readonly procs: ProcessTable,
    private readonly registry: CallRegistry,
    private readonly ioTally: IoTally<Proc>,
    private readonly early: EarlyRecordStore,
    private readonly canaries: CanaryWatch,
  ) {}

  /** A read or write with its payload. */
  payload(frame: PayloadFrame): void {
    this.file(ioOf(frame, this.ctx.nowMs));
  }

  /** A U record: no bytes, so an empty payload of the real length marks the stream truncated. */
  uncaptured(rec: Extract<TracerFrame, { kind: 'uncaptured' }>): void {
    this.file({ since: this.ctx.nowMs, pid: rec.pid, tid: rec.tid, kind: rec.direction, fd: rec.fd, file: rec.file, ts: rec.ts, len: rec.len, bytes: EMPTY, whole: true, uncaptured: true });
  }

  /**
   * Files a read or write where it belongs. `counted`: already in the io
   * tally (kept for an exec that came later).
   */
  file(io: IoInFlight, counted = false): void {
    // The canary's write was checked by the framer; it is no call's.
    if (this.canaries.has(io.pid)) return;
    const proc = this.procs.at(io.pid, io.ts);
    if (!proc && this.fileLate(io)) return;
    if (!proc) {
      const early = this.early.for(io.pid, this.ctx.nowMs);
      // Dated from its own arrival: one let go by a publication is as old as it is.
      early.since = Math.min(early.since, io.since);
      early.ios.push(io);
      return;
    }
    // Counted once it is the known process's: a record never attributed cannot stand in for a later process's.
    if (!counted) this.ioTally.record(proc, this.ctx.nowMs);
    const call = proc.callId ? this.registry.callFor(proc.callId) : undefined;
    if (!call) {
      this.ctx.counters.unattributed++;
      return;
    }
    this.registry.touch(call.base.id);
    const isMain = proc.role === 'plugin' && call.base.pid === proc.pid;
    const stream = streamFor(call, proc, io, isMain);
    if (stream === null && !counted) {
      // Not the call's: maybe the bytes of what this fork exec'd, or of the next process with this pid (this one's
      // exit not in yet), that exec still in a CPU buffer read later. Kept for it, with what came early.
      this.early.keep(io, proc);
      return;
    }
    if (stream && io.uncaptured) call.uncapturedIo++;
    stream?.add(io.ts, this.seq++, io.bytes, io.len, io.whole);
  }

  /**
   * A forked process exec'd: its reads and writes kept since, dated after
   * the exec, go to what it is now; when more were made than could be kept,
   * its call is marked.
   */
  replayBeforeExec(proc: Proc, execTs: number): void {
    const kept = this.early.takeKept(proc.pid);
    if (!kept) return;
    if (kept.overflow) this.registry.markLostRecords(proc.pid, 'early-overflow');
    for (const { io, countedFor } of kept.ios) {
      if (io.ts < execTs) continue;
      if (countedFor === proc) {
        this.file(io, true);
      } else {
        // Counted for the process the pid named then; it is this one's.
        this.ioTally.uncount(countedFor);
        this.file(io);
      }
    }
  }

  /**
   * A read or write of a process of a published call, made before its exit,
   * that came after the call was published. The tracer's counts (per thread,
   * exact) hold a call until its records are in, so this is a safety net: for
   * what those counts miss (a thread's end come later than the wait for
   * descendants, an older tracer's count per process, which two threads
   * printing at once on two CPUs could bump once for two) or a call published
   * without its records after IO_WAIT_MS. Its bytes go in (streams are
   * ordered by time) and the call is published again: what is stored ends
   * byte-exact.
   */
  private fileLate(io: IoInFlight): boolean {
    const proc = this.procs.remembered(io.pid);
    const call = proc?.callId == null ? undefined : this.registry.recent(proc.callId);
    if (!proc || !call || proc.exitTs === undefined || io.ts > proc.exitTs || (proc.forkTs !== undefined && io.ts < proc.forkTs)) return false;
    if (proc.pid === call.base.pid && io.ts < call.execTimes[0]!) return false;
    const stream = streamFor(call, proc, io, proc.role === 'plugin' && call.base.pid === proc.pid);
    if (stream === null) return true;
    if (io.uncaptured) call.uncapturedIo++;
    stream.add(io.ts, this.seq++, io.bytes, io.len, io.whole);
    this.registry.update(call);
    return true;
  }
}

const EMPTY = Buffer.alloc(0);

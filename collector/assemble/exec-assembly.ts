/**
 * What an exec means: a new call (a plugin in CNI_PATH, or any program a
 * runtime ran), a helper of the call its parent works for, an exec in place
 * of a call's plugin (the chain grows), or the collector's own canary. Also
 * holds an exec whose traced parent's exec has not come, and adopts a
 * delegate taken for a top-level call because its plugin's exec came later.
 */

import { callId, identityFromEnv, markLost, newCallState, newHelperState, pluginName, snapshotCall, type CallState, type HelperState, type Proc } from './call-state.js';
import type { CanaryWatch } from './canary-watch.js';
import { isInCniPath } from './cni-env.js';
import { decodeExecBlock, type DecodedExecBlock } from './exec-block.js';
import { resolveExecPath } from './exec-path.js';
import { shimParentFor } from './socket-shims.js';
import { CANARY_COMMAND } from '../tracer/canary-marks.js';
import type { ExecFrame } from '../../bpf/index.js';
import type { AssemblyContext } from './assembly-context.js';
import type { CallRegistry } from './call-registry.js';
import type { EarlyRecordStore, WaitingExec } from './early-records.js';
import type { IoRouter } from './io-routing.js';
import type { ProcessLifecycle } from './process-lifecycle.js';
import type { ProcessTable } from './process-table.js';
import type { ParentProcess } from '../types.js';

/** What an exec ran: its absolute path where the tracer told enough, and whether that path is cut. */
interface ExecImage {
  execPath: string;
  pathCut: boolean;
}

export class ExecAssembly {
  private readonly maxStreamBytes: number;
  private readonly maxHelperStreamBytes: number;

  constructor(
    private readonly ctx: AssemblyContext,
    private readonly procs: ProcessTable,
    private readonly registry: CallRegistry,
    private readonly early: EarlyRecordStore,
    private readonly io: IoRouter,
    private readonly lifecycle: ProcessLifecycle,
    private readonly canaries: CanaryWatch,
  ) {
    this.maxStreamBytes = ctx.opts.maxStreamBytes ?? 4 * 1024 * 1024;
    this.maxHelperStreamBytes = ctx.opts.maxHelperStreamBytes ?? 64 * 1024;
  }

  /** An exec, whole or cut (the framer gave up on lines that were lost). */
  exec(frame: ExecFrame): void {
    this.apply({ exec: frame, since: this.ctx.nowMs }, true);
  }

  /**
   * Execs that waited for their parent: those whose parent is known now (its
   * fork came) go on with it, those that waited as long as early records do
   * go on without it.
   */
  expire(nowMs: number): void {
    const known: number[] = [];
    for (const [ppid, first] of this.early.awaitedParents()) if (this.procs.at(ppid, first.exec.ts)) known.push(ppid);
    for (const ppid of known) this.resumeChildren(ppid);
    for (const w of this.early.overdueExecs(nowMs)) this.apply(w, false);
  }

  /** Every exec waiting for its parent goes on now, without it. */
  releaseWaiting(): void {
    for (const w of this.early.overdueExecs(Infinity)) this.apply(w, false);
  }

  /**
   * An exec, whole or with what came of it. `mayWait`: it may wait for the
   * exec of its parent, when that is a traced process not known yet.
   */
  private apply(waiting: WaitingExec, mayWait: boolean): void {
    const rec = waiting.exec;
    const decoded = decodeExecBlock(rec);
    if (decoded.env.CNI_COMMAND === CANARY_COMMAND) {
      this.ctx.counters.canaries++;
      this.early.drop(rec.pid);
      this.canaries.remember(rec.pid);
      return;
    }
    if (this.ctx.opts.isOwnCanary?.(rec.pid, rec.ppid)) {
      // Our canary seen without its environment (bpftrace still attaching its probes): no call, and no proof of recording.
      this.early.drop(rec.pid);
      this.canaries.remember(rec.pid);
      return;
    }
    let existing = this.procs.get(rec.pid) ?? this.registry.takeExitedFork(rec.pid, rec.start);
    if (existing && existing.start === null && ((existing.ppid !== rec.ppid && this.procs.parentLives(existing)) || forkedBefore(existing, rec.start) || (existing.forkTs !== undefined && existing.forkTs > rec.ts))) {
      // A stale fork entry (a thread's clone whose end was not seen) under a pid now used by another process,
      // or one of a later task with this pid (forked after this exec: its record came first).
      // (A child whose parent is gone was re-parented: its fork entry is right, unless it is dated before
      // the process started: a process's fork comes after its start time.)
      this.procs.delete(rec.pid);
      existing = undefined;
    }
    if (existing && existing.start !== null && existing.start !== rec.start) {
      // The pid was reused and the old process's exit never arrived.
      this.registry.retire(existing, 'the process exit was not seen (pid reused)');
      existing = undefined;
    }
    // Ancestry comes from the fork records: a child whose parent exited is re-parented (to init or a
    // subreaper) by the time it execs, but it still works for the call its parent worked for.
    const parent = existing ?? this.procs.at(rec.ppid, rec.ts);
    if (mayWait && parent === undefined && (rec.parentTraced === true || this.early.has(rec.ppid))) {
      // Its parent is traced (the tracer says so, or records of it came, waiting for its exec: a fork naming this
      // process, say) and its exec is still in a CPU buffer read later: without it this exec would be taken for a
      // call of its own.
      this.early.awaitParent(rec.ppid, waiting);
      return;
    }
    const parentCallId = parent?.callId ?? this.registry.lateChildOf(rec.ppid, rec.ts);
    // The tracer said its parent is traced, yet no record of the parent came in all that wait: the parent's exec
    // was lost (a full buffer). A call is made of it, marked: its parent call and what it shared with it are unknown.
    const parentLost = rec.parentTraced === true && parent === undefined && parentCallId === null;
    const startedAtUs = this.ctx.opts.monoToEpochUs(rec.ts);
    const pathCut = rec.pathCut;
    // A relative path (`./host-local`, a relative CNI_PATH entry) made absolute: where it lies decides whether it is a call.
    const cwd = rec.cwd;
    const execPath = resolveExecPath(rec.path || decoded.argv[0] || '', cwd);
    // An env whose chunks did not all come may lack CNI_PATH: a child's is its parent call's (a delegate inherits it).
    const cniPath = decoded.env.CNI_PATH ?? (rec.whole || parentCallId === null ? undefined : this.registry.callFor(parentCallId)?.base.env.CNI_PATH);
    const inCniPath = isInCniPath(execPath, cniPath, cwd);
    const plugin = existing?.role === 'plugin' && existing.callId !== null ? this.registry.callFor(existing.callId) : undefined;
    if (plugin && plugin.base.pid === rec.pid) {
      // The plugin process exec'd another image in place: the same process, the same pipes, the same call.
      if (!plugin.execTimes.includes(rec.ts)) this.execInPlace(plugin, rec, { execPath, pathCut }, decoded, inCniPath, startedAtUs);
      else this.ctx.counters.duplicateExecs++;
      existing!.start = rec.start;
      this.resumeChildren(rec.pid);
      this.lifecycle.replayEarly(rec.pid, rec.ts, rec.start);
      return;
    }
    const parentCall = parentCallId === null ? undefined : this.registry.callFor(parentCallId);
    const isPlugin = parentCallId === null || inCniPath;
    const id = callId(startedAtUs, rec.pid);
    if (isPlugin && this.registry.isKnown(id)) {
      // The same exec again (a record delivered twice): one call, not a second one that replaces the first.
      this.ctx.counters.duplicateExecs++;
      return;
    }
    // A new process joins its parent's tree (its payloads from the same tracer); one whose parent is no traced process starts a tree.
    const payloadSrc = parent ? parent.payloadSrc : this.procs.epochAt(rec.ts).src;
    const proc: Proc = existing ?? { pid: rec.pid, ppid: rec.ppid, start: null, callId: null, role: 'fork', helper: null, exited: false, payloadSrc };
    if (proc.role === 'helper' && proc.helper && proc.helper.endedAtUs === null && isPlugin) {
      // A helper that exec'd a plugin in place: the helper's own image ends here.
      proc.helper.endedAtUs = startedAtUs;
    }
    proc.start = rec.start;
    const ppid = existing?.ppid ?? rec.ppid;
    proc.ppid = ppid;
    this.procs.set(proc);
    if (isPlugin) {
      // Not exec'd by a call: maybe a delegate of a shim that asked a daemon to run it (Multus thick mode).
      const parentId = parentCallId ?? shimParentFor(this.registry.shims(), { containerId: decoded.env.CNI_CONTAINERID, ppid: rec.ppid, startedAtUs });
      const call = this.newCall(rec, { execPath, pathCut }, decoded, parentId, parentCallId === null, startedAtUs, rec.parentComm);
      proc.role = 'plugin';
      proc.callId = call.base.id;
      proc.helper = null;
      call.pids.add(rec.pid);
      this.registry.add(call);
      const lostEarly = this.early.takeLost(rec.pid);
      if (lostEarly) markLost(call, lostEarly);
      // Its argv/env chunks did not all come (lost, or still in a CPU buffer unread when the wait for them ended):
      // what it says of itself (container, command) may be wrong.
      if (!rec.whole || parentLost) markLost(call, 'tracer-lost');
      this.ctx.counters.callsStarted++;
      this.ctx.emit({ type: 'call.started', call: snapshotCall(call) });
    } else if (parentCall) {
      const helper = this.newHelper(rec.pid, ppid, execPath, decoded.argv, startedAtUs);
      parentCall.helpers.push(helper);
      parentCall.pids.add(rec.pid);
      proc.role = 'helper';
      proc.callId = parentCallId;
      proc.helper = helper;
      this.registry.touch(parentCallId!);
    } else {
      // A descendant of a call published and let go long ago: still no call of its own, nothing to add to.
      proc.callId = parentCallId;
    }
    // Its exit came first (its exec through a CPU buffer read later), applied to the fork entry: it ends what it
    // became now. Without this, a delegate exited long ago stayed running until the liveness sweep gave up on it.
    this.lifecycle.endWith(proc, this.ctx.nowMs);
    // Its children whose exec came first: those that waited for it, and delegates taken for calls of their own.
    this.resumeChildren(rec.pid);
    if (proc.role === 'plugin') this.adoptEarlyCalls(proc, rec.ts);
    this.io.replayBeforeExec(proc, rec.ts);
    this.lifecycle.replayEarly(rec.pid, rec.ts, rec.start);
  }

  /** Process `pid` is known now: the execs of its children that waited for it go on, in order. */
  private resumeChildren(pid: number): void {
    for (const w of this.early.takeChildExecs(pid) ?? []) this.apply(w, false);
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
    const call = callId === null ? undefined : this.registry.open(callId);
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
    const started = this.registry.topLevelOf(plugin.pid);
    for (const id of started) {
      const open = this.registry.open(id);
      if (open && adopt(open)) this.registry.forgetTopLevel(plugin.pid, id);
    }
    for (const id of started) {
      const published = this.registry.recent(id);
      if (this.registry.isOpen(id)) continue;
      if (!published) {
        this.registry.forgetTopLevel(plugin.pid, id);
        continue;
      }
      if (!adopt(published)) continue;
      this.registry.forgetTopLevel(plugin.pid, id);
      this.registry.update(published);
    }
  }

  /** An exec in place by a call's plugin process: the chain grows; a CNI plugin image names the call from now on. */
  private execInPlace(call: CallState, rec: ExecFrame, { execPath, pathCut }: ExecImage, decoded: DecodedExecBlock, inCniPath: boolean, startedAtUs: number): void {
    call.execChain.push(execPath);
    call.execTimes.push(rec.ts);
    if (inCniPath) {
      call.base = { ...call.base, path: execPath, plugin: pluginName(execPath), argv: decoded.argv, ...identityFromEnv(decoded.env) };
      call.envTruncated = decoded.truncated;
      call.pathTruncated = pathCut;
      // A wrapper that exec'd a socket shim (or a shim that exec'd something else) changes where delegates look.
      this.registry.updateShim(call);
    } else {
      // A program that is no plugin (`exec cat`): a helper step of the same call, which keeps its name.
      call.helpers.push(this.newHelper(rec.pid, rec.ppid, execPath, decoded.argv, startedAtUs));
    }
    this.registry.touch(call.base.id);
  }

  private newCall(
    rec: ExecFrame,
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
      const seen = this.ctx.opts.describeParent?.(rec.ppid);
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
      // The mode of when it started: the payload epochs of the process table.
      captureMode: this.procs.epochAt(rec.ts).mode,
      maxStreamBytes: this.maxStreamBytes,
      envTruncated: decoded.truncated,
      pathTruncated: pathCut,
    });
  }

  private newHelper(pid: number, ppid: number, execPath: string, argv: string[], startedAtUs: number): HelperState {
    return newHelperState(pid, ppid, execPath, argv, startedAtUs, this.maxHelperStreamBytes);
  }
}

/** Whether a fork entry was made by a fork dated before the process `start` (kernel ns) began: another task's. */
function forkedBefore(proc: Proc, start: string): boolean {
  // 1 µs of slack for the float conversions; a task's fork record is dated after its start time.
  return proc.forkTs !== undefined && proc.forkTs < Number(start) / 1000 - 1;
}


/**
 * A deterministic model of a busy node as bpf/cnirec.bt reports it, with the
 * ground truth of every call, to drive the collector's record flow
 * (collector/record-flow.ts) where it is cheap to be thorough.
 *
 * The kernel: CNI calls over time (top-level plugins exec'd by an untraced
 * runtime, some with Go-like worker threads that read and write on any CPU,
 * some with a delegate plugin of their own — fork, exec, its own stdin pipe
 * and stdout — and helpers outside CNI_PATH writing to the call's stderr),
 * pids and tids drawn from a small pool so they are reused across calls (a
 * busy node's pid_max wraps). Each record is printed as the .bt program
 * prints it (test/support/tracer-lines.ts) into the buffer of the CPU the
 * task runs on, in kernel time order: X P B… at exec (cpu×2^22+pid), F for forks and thread
 * clones (with their clone_flags: CLONE_THREAD marks a thread), R/W and their D lines
 * (cpu×2^22+tid), T `<tid> <ts> <pid> <io_records> <start> <clones>` for a worker thread's
 * end with the R/W headers that thread printed and the tasks it cloned, Q with the leader's
 * (counted per thread, so exact).
 *
 * The standby tracer (when the plan has one): a second, sched-only bpftrace
 * with buffers of its own, printing its copies of the exec, fork, exit and
 * thread-end lines (no payloads: its counts of payload records are 0), each
 * dated by its own program's run on the same tracepoint hit, a fraction of a
 * µs from the main tracer's (before the task goes on: what the task does
 * next is dated after both); a process's or thread's end now and then
 * milliseconds later (its program preempted: nothing of that task comes
 * after). The collector must take each event once, and each call's payloads
 * and counts from the main tracer.
 *
 * bpftrace: its buffers are read one CPU at a time, in a random order, each
 * for some or all of what it holds (a header and its D lines may come apart);
 * a CPU's buffer may not be read for a while (lags), or none is (bpftrace not
 * scheduled). A buffer that holds `capacity` lines is full: what is printed
 * into it then is dropped (whole records, or the tail of one that did not
 * fit), still counted in io_records as the probe's @io++ comes before its
 * printf, and the next read of that buffer says `Lost N events` there.
 *
 * The daemon: lines are pushed into the record flow as they arrive,
 * the publish tick runs every 25 ms (releaseDue, tick, the quiet flush after
 * 40 ms without a line), the clock release when the oldest held record is due
 * (releaseByClock), as collector/record-pipeline.ts does with real clocks.
 *
 * Deterministic: every choice comes from the plan (fast-check generates it)
 * and a PRNG seeded by it.
 */

import fc from 'fast-check';
import { CANARY_COMMAND, CANARY_OUTPUT } from '../../collector/tracer/canary-marks.js';
import { callId } from '../../collector/assemble/call-state.js';
import { RecordFlow } from '../../collector/record-flow.js';
import { DAEMON_SWEEP, LivenessSweep } from '../../collector/liveness-sweep.js';
import { REORDER_WINDOW, type ReorderWindowOptions } from '../../collector/tracer/reorder-window.js';
import type { CniCall, CollectorEvent } from '../../collector/types.js';
import { monoToEpochUs } from './replay.js';
import { execLines, exitLine, forkLine, readLines, threadExitLine, writeLines } from './tracer-lines.js';

/** One process of a call that reads the call's stdin and writes its stdout and stderr. */
export interface ProcPlan {
  /** Go-like worker threads, cloned after the exec: any of them does any read or write; ended before the process. */
  readonly threads: number;
  /** Sizes of the reads of its stdin, in order (above 200 bytes: several D lines). */
  readonly stdinReads: readonly number[];
  readonly stdoutWrites: readonly number[];
  readonly stderrWrites: readonly number[];
  readonly exitCode: number;
}

/** A program outside CNI_PATH the plugin runs (iptables, ip): writes to its own stdout pipe and to the call's stderr. */
export interface HelperPlan {
  readonly stdoutWrites: readonly number[];
  readonly stderrWrites: readonly number[];
}

export interface CallPlan {
  /** µs after the previous call's start. */
  readonly gapUs: number;
  readonly command: 'ADD' | 'DEL' | 'CHECK';
  readonly plugin: ProcPlan;
  readonly helpers: readonly HelperPlan[];
  /** A plugin it delegates to (host-local for bridge): its own call, with the plugin's call as parent. */
  readonly delegate: ProcPlan | null;
}

export interface DrainPlan {
  /** Chance, at each read round, that a CPU's buffer is not read for a while, up to `cpuStallMaxUs`. */
  readonly cpuStallChance: number;
  readonly cpuStallMaxUs: number;
  /** Chance, at each read round, that bpftrace reads nothing for a while (not scheduled), up to `globalStallMaxUs`. */
  readonly globalStallChance: number;
  readonly globalStallMaxUs: number;
  /** Lines a CPU buffer holds; what is printed into a full one is lost. null: never full. */
  readonly capacity: number | null;
}

export interface NodePlan {
  readonly seed: number;
  readonly cpus: number;
  /** A sched-only standby tracer runs beside the main one, as in the daemon. */
  readonly standby: boolean;
  /** Pids and tids handed out (the pool grows only when all are taken). */
  readonly pidPool: number;
  /** A process's consecutive records lie up to this many µs apart. */
  readonly stepUs: number;
  readonly calls: readonly CallPlan[];
  readonly drain: DrainPlan;
}

/** What a call really was: what a record of it must show, byte for byte. */
export interface TrueCall {
  /**
   * The id the collector gives it (its exec's time and pid): from the main
   * tracer's time until the run ends, then the collector's own, found by the
   * process (pid and start time): with a standby, the copy of the exec that
   * goes on first, microseconds apart, dates it.
   */
  id: string;
  /** Its process's start time, as the exec line says it. */
  processStart: string;
  /** The call that delegated to it. */
  parent: TrueCall | null;
  readonly index: string;
  pid: number;
  readonly path: string;
  readonly containerId: string;
  parentId: string | null;
  readonly stdin: Buffer[];
  readonly stdout: Buffer[];
  readonly stderr: Buffer[];
  readonly exitCode: number;
  /** A line of its exec record (X, P, B) was dropped: the collector may not know it at all. */
  execLost: boolean;
  /** Lines of its own processes' records that were dropped. */
  linesLost: number;
}

export interface SimStats {
  lines: number;
  lostLines: number;
  lostNotices: number;
  /** The largest arrival lag (µs) of a line: how far behind the kernel bpftrace read. */
  maxLagUs: number;
}

export interface SimResult {
  readonly truth: readonly TrueCall[];
  /** The last event per call id: the record. */
  readonly finals: ReadonlyMap<string, CniCall>;
  readonly events: readonly CollectorEvent[];
  readonly stats: SimStats;
}

const CNI_PATH = '/opt/cni/bin';
const PLUGINS = ['bridge', 'macvlan', 'ptp', 'ipvlan'];
const DELEGATES = ['host-local', 'static'];
const HELPERS = ['/usr/sbin/iptables', '/usr/sbin/ip', '/usr/sbin/tc'];
/** Kernel monotonic ns when the simulation starts (some hours of uptime). */
const T0_NS = 10_000_000_000_000;
const FIRST_PID = 2000;
/** The runtime that execs top-level plugins, and the daemon that execs its canary: never traced. */
const RUNTIME_PID = 900;
const DAEMON_PID = 901;
const PUBLISH_EVERY_US = 25_000;
const QUIET_US = 40_000;
/** The daemon's liveness sweep (collector/liveness.ts): running calls whose process is gone. */
const LIVENESS_EVERY_US = 5_000_000;
/** How long past the last action the daemon's liveness sweep may take to end calls whose exit was lost. */
const WIND_DOWN_US = 30_000_000;
const SRC = 1;
/** The standby tracer's run. */
const STANDBY_SRC = 2;
/** How long (µs) after a pid is freed the kernel may hand it out again (see Node.allocate). */
const PID_REUSE_US = 1_000_000;

/** mulberry32: small, fast, good enough to shuffle a simulation. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

interface Task {
  /** Pid of a process's leader, tid of a thread; 0 until allocated. */
  id: number;
  readonly leader: Task | null;
  /** The leader's start time (ns). */
  start: number;
  /** The payload records this thread (or leader) printed: its T's (its Q's) io_records. */
  io: number;
  /** When it was cloned (ns): a thread's start time, on its T line. */
  cloned: number;
  /** The tasks it cloned: its T's (its Q's) clones. */
  clones: number;
  cpu: number;
  /** The call whose process tree it belongs to, for the loss tally. */
  readonly owner: TrueCall;
}

interface Action {
  readonly ts: number;
  readonly seq: number;
  readonly run: (ts: number) => void;
}

type Entry = { ts: number; line: string; lost?: undefined } | { ts: number; lost: number; line?: undefined };

class CpuBuffer {
  entries: Entry[] = [];
  head = 0;
  stalledUntilUs = 0;
  constructor(
    /** The tracer run whose buffer it is. */
    readonly src: number,
  ) {}
  get pending(): number {
    return this.entries.length - this.head;
  }
}

/** A sched line as a tracer prints it at `ts`: the main tracer's (`standby` false) or the standby's copy. */
type SchedLines = (ts: number, standby: boolean) => readonly string[];

/** The kernel and bpftrace: prints records into CPU buffers and hands them over as bpftrace reads them. */
class Node {
  readonly rng: () => number;
  readonly buffers: CpuBuffer[];
  /** The standby tracer's buffers (none without it). */
  readonly standbyBuffers: CpuBuffer[];
  readonly actions: Action[] = [];
  readonly truth: TrueCall[] = [];
  readonly stats: SimStats = { lines: 0, lostLines: 0, lostNotices: 0, maxLagUs: 0 };
  /** Processes alive now, as `pid:start` (what /proc would say to the liveness sweep). */
  readonly alive = new Set<string>();
  private seq = 0;
  private readonly free: Array<{ pid: number; freedAt: number }> = [];
  private nextPid = FIRST_PID;
  private lastPid = 0;
  private nextFile = 1_000_001;

  constructor(readonly plan: NodePlan) {
    this.rng = prng(plan.seed);
    this.buffers = Array.from({ length: plan.cpus }, () => new CpuBuffer(SRC));
    this.standbyBuffers = plan.standby ? Array.from({ length: plan.cpus }, () => new CpuBuffer(STANDBY_SRC)) : [];
    for (let i = 0; i < plan.pidPool; i++) this.free.push({ pid: this.nextPid++, freedAt: -Infinity });
  }

  int(lo: number, hi: number): number {
    return lo + Math.floor(this.rng() * (hi - lo + 1));
  }

  bytes(n: number): Buffer {
    const b = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) b[i] = Math.floor(this.rng() * 256);
    return b;
  }

  file(): number {
    return this.nextFile++;
  }

  at(ts: number, run: (ts: number) => void): void {
    this.actions.push({ ts, seq: this.seq++, run });
  }

  /**
   * The next free pid after the last one handed out, as the kernel's
   * alloc_pid does (cyclic up to pid_max), among those freed at least
   * PID_REUSE_US before `ts`: the pool is small so that pids come back
   * within the seconds bpftrace may lag, but the kernel hands a pid out
   * again only after cycling through pid_max (32768 at the least: a second
   * at 30,000 forks a second), never microseconds after it was freed (a
   * random pick from a pool of six did, and made orderings no node shows).
   */
  allocate(task: Task, ts: number): void {
    const ready = (f: { pid: number; freedAt: number }) => f.freedAt <= ts - PID_REUSE_US * 1000;
    let i = this.free.findIndex((f) => ready(f) && f.pid > this.lastPid);
    if (i < 0) i = this.free.findIndex(ready);
    if (i < 0) {
      this.free.push({ pid: this.nextPid++, freedAt: -Infinity });
      i = this.free.length - 1;
    }
    task.id = this.free[i]!.pid;
    this.lastPid = task.id;
    this.free.splice(i, 1);
  }

  release(task: Task, ts: number): void {
    // Kept in pid order, as the kernel's cyclic search sees them.
    const at = this.free.findIndex((f) => f.pid > task.id);
    this.free.splice(at < 0 ? this.free.length : at, 0, { pid: task.id, freedAt: ts });
  }

  /** The CPU a task runs on for its next record: mostly where it ran, sometimes another. */
  cpuOf(task: Task): number {
    if (this.rng() < 0.4) task.cpu = Math.floor(this.rng() * this.plan.cpus);
    return task.cpu;
  }

  /**
   * One probe run's lines into a CPU's buffer; what does not fit in a full
   * buffer is dropped and counted for the `Lost N events` line. Answers the
   * lines dropped.
   */
  print(cpu: number, ts: number, lines: readonly string[], owner: TrueCall | null, buf = this.buffers[cpu]!): number {
    const cap = this.plan.drain.capacity;
    const room = cap === null ? lines.length : Math.max(0, cap - buf.pending);
    const kept = Math.min(room, lines.length);
    for (let i = 0; i < kept; i++) buf.entries.push({ ts, line: lines[i]! });
    const dropped = lines.length - kept;
    if (dropped > 0) {
      const last = buf.entries[buf.entries.length - 1];
      if (last?.lost !== undefined && buf.entries.length > buf.head) last.lost += dropped;
      else buf.entries.push({ ts, lost: dropped });
      this.stats.lostLines += dropped;
      if (owner && buf.src === SRC) owner.linesLost += dropped;
    }
    return dropped;
  }

  /**
   * One sched probe's lines: the main tracer's into its CPU buffer, and the
   * standby's copy, dated by its own run, into its own (`end`: a task's last
   * record, after which a preempted copy may come late). Answers the lines
   * the main tracer dropped.
   */
  printSched(cpu: number, ts: number, lines: SchedLines, owner: TrueCall | null, end = false): number {
    const dropped = this.print(cpu, ts, lines(ts, false), owner);
    if (this.standbyBuffers.length > 0) {
      // Either program first, under a µs apart (a task's next record is a µs or more on); an end's copy now and then late.
      const at = end && this.rng() < 0.02 ? ts + this.int(1_000_000, 5_000_000) : ts + this.int(-400, 400);
      this.print(cpu, Math.max(ts, at), lines(at, true), owner, this.standbyBuffers[cpu]!);
    }
    return dropped;
  }
}

/** Advances a process's clock: its next record is 1 µs to `stepUs` later, with ns of its own. */
function clock(node: Node, startNs: number): () => number {
  let t = startNs;
  return () => {
    t += node.int(1_000, node.plan.stepUs * 1_000) + node.int(0, 999);
    return t;
  };
}

interface Files {
  readonly stdin: number;
  readonly stdout: number;
  readonly stderr: number;
}

function newTruth(index: string, path: string, containerId: string, exitCode: number): TrueCall {
  return { id: '', processStart: '', parent: null, index, pid: 0, path, containerId, parentId: null, stdin: [], stdout: [], stderr: [], exitCode, execLost: false, linesLost: 0 };
}

function cniEnv(command: string, containerId: string): Record<string, string> {
  return {
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    CNI_COMMAND: command,
    CNI_CONTAINERID: containerId,
    CNI_NETNS: `/var/run/netns/cni-${containerId}`,
    CNI_IFNAME: 'eth0',
    CNI_ARGS: `K8S_POD_NAMESPACE=sim;K8S_POD_NAME=${containerId}`,
    CNI_PATH,
  };
}

/** The exec of `task` (its pid allocated here for a top-level plugin, at its fork otherwise). */
function execAction(node: Node, task: Task, parent: Task | null, path: string, env: Record<string, string>, files: Files, truth: TrueCall | null): (ts: number) => void {
  return (ts) => {
    if (parent === null) {
      node.allocate(task, ts);
      task.start = ts - node.int(20_000, 200_000);
      task.cpu = node.int(0, node.plan.cpus - 1);
      node.alive.add(`${task.id}:${task.start}`);
    }
    if (truth) {
      truth.pid = task.id;
      truth.processStart = String(task.start);
      // As the parser and the assembler compute it (µs with the ns as a fraction, then the epoch: float rounding included).
      truth.id = callId(monoToEpochUs(Math.floor(ts / 1000) + (ts % 1000) / 1000), task.id);
    }
    const comm = parent === null ? 'containerd' : (parent.owner.path.split('/').pop() ?? 'plugin').slice(0, 15);
    // The exec's probes run on one CPU, whose buffer takes all its lines; they name it above the pid.
    const cpu = node.cpuOf(task);
    const lines = (at: number) => execLines({ ts: at, pid: task.id, ppid: parent?.id ?? RUNTIME_PID, parentTraced: parent !== null, start: task.start, path, argv: [path], env, stdio: [files.stdin, files.stdout, files.stderr], parentComm: comm, cpu });
    const dropped = node.printSched(cpu, ts, lines, task.owner);
    if (dropped > 0 && truth) truth.execLost = true;
  };
}

/** A fork of a new process, or a clone of a thread, by `parent` (printed with its process's pid). */
function forkAction(node: Node, parent: Task, child: Task): (ts: number) => void {
  return (ts) => {
    node.allocate(child, ts);
    if (child.leader === null) {
      child.start = ts;
      node.alive.add(`${child.id}:${child.start}`);
    }
    child.cpu = node.int(0, node.plan.cpus - 1);
    child.cloned = ts;
    parent.clones++;
    node.printSched(node.cpuOf(parent), ts, (at) => [forkLine(at, procOf(parent).id, child.id, child.leader === null ? 'process' : 'thread')], parent.owner);
  };
}

function procOf(task: Task): Task {
  return task.leader ?? task;
}

/** A read or write by `thread`: the header is counted in the thread's io_records even when its lines are dropped. */
function ioAction(node: Node, thread: Task, kind: 'read' | 'write', fd: number, file: number, data: Buffer): (ts: number) => void {
  return (ts) => {
    const proc = procOf(thread);
    thread.io++;
    const cpu = node.cpuOf(thread);
    const spec = { ts, pid: proc.id, tid: thread.id, fd, file, cpu };
    node.print(cpu, ts, kind === 'read' ? readLines(spec, data) : writeLines(spec, data), thread.owner);
  };
}

function threadExitAction(node: Node, thread: Task): (ts: number) => void {
  return (ts) => {
    // The standby has no payload probes: the records it counts are none.
    const line: SchedLines = (at, standby) => [threadExitLine(thread.id, { ts: at, pid: procOf(thread).id, ioRecords: standby ? 0 : thread.io, start: thread.cloned, clones: thread.clones })];
    node.printSched(node.cpuOf(thread), ts, line, thread.owner, true);
    node.release(thread, ts);
  };
}

function exitAction(node: Node, proc: Task, exitCode: number): (ts: number) => void {
  return (ts) => {
    const line: SchedLines = (at, standby) => [exitLine({ ts: at, pid: proc.id, start: proc.start, code: exitCode, ioRecords: standby ? 0 : proc.io, clones: proc.clones })];
    node.printSched(node.cpuOf(proc), ts, line, proc.owner, true);
    node.alive.delete(`${proc.id}:${proc.start}`);
    node.release(proc, ts);
  };
}

/**
 * The daemon's canary (collector/tracer/canary.ts), run when the liveness
 * sweep waits for the stream to move on: `echo` with CNI_COMMAND set to the
 * canary's, one write of the known payload, its exit. A process of the node
 * like any other: a pid from the pool, a CPU buffer that may lag or be full.
 */
function printCanary(node: Node, ts: number): void {
  const task = newTask(null, newTruth('canary', '/usr/bin/echo', '', 0));
  node.allocate(task, ts);
  const cpu = node.int(0, node.plan.cpus - 1);
  const lines = (at: number) => execLines({ ts: at, pid: task.id, ppid: DAEMON_PID, start: ts - 50_000, path: '/usr/bin/echo', argv: ['echo', CANARY_OUTPUT.trimEnd()], env: { PATH: '/usr/bin:/bin', CNI_COMMAND: CANARY_COMMAND }, parentComm: 'node', cpu });
  node.printSched(cpu, ts, lines, null);
  node.print(cpu, ts + 20_000, writeLines({ ts: ts + 20_000, pid: task.id, fd: 1, file: node.file(), cpu }, CANARY_OUTPUT), null);
  node.printSched(cpu, ts + 40_000, (at, standby) => [exitLine({ ts: at, pid: task.id, start: ts - 50_000, ioRecords: standby ? 0 : 1 })], null);
  node.release(task, ts + 40_000);
}

function newTask(leader: Task | null, owner: TrueCall): Task {
  return { id: 0, leader, start: 0, io: 0, cpu: 0, cloned: 0, clones: 0, owner };
}

/**
 * One plugin process of a call: exec, worker threads, stdin reads, stderr
 * logging, `between` (its helpers and delegate, run while it waits), stdout
 * writes, threads' ends, exit. Answers when it exited.
 */
function pluginProcess(
  node: Node,
  plan: ProcPlan,
  task: Task,
  parent: Task | null,
  path: string,
  env: Record<string, string>,
  files: Files,
  truth: TrueCall,
  startNs: number,
  between: (proc: Task, next: () => number) => void,
): number {
  const next = clock(node, startNs);
  node.at(startNs, execAction(node, task, parent, path, env, files, truth));
  const threads = Array.from({ length: plan.threads }, () => newTask(task, truth));
  for (const th of threads) node.at(next(), forkAction(node, task, th));
  const anyThread = () => [task, ...threads][node.int(0, threads.length)]!;
  const logs = [...plan.stderrWrites];
  const logNow = () => {
    if (logs.length === 0 || node.rng() < 0.5) return;
    const data = node.bytes(logs.shift()!);
    truth.stderr.push(data);
    node.at(next(), ioAction(node, anyThread(), 'write', 2, files.stderr, data));
  };
  for (const size of plan.stdinReads) {
    const data = node.bytes(size);
    truth.stdin.push(data);
    node.at(next(), ioAction(node, anyThread(), 'read', 0, files.stdin, data));
    logNow();
  }
  between(task, next);
  for (const size of plan.stdoutWrites) {
    const data = node.bytes(size);
    truth.stdout.push(data);
    node.at(next(), ioAction(node, anyThread(), 'write', 1, files.stdout, data));
    logNow();
  }
  while (logs.length > 0) {
    const data = node.bytes(logs.shift()!);
    truth.stderr.push(data);
    node.at(next(), ioAction(node, anyThread(), 'write', 2, files.stderr, data));
  }
  for (const th of threads) node.at(next(), threadExitAction(node, th));
  const exitTs = next();
  node.at(exitTs, exitAction(node, task, plan.exitCode));
  return exitTs;
}

/** The actions of one call (its plugin, helpers and delegate) from `startNs`. */
function scheduleCall(node: Node, plan: CallPlan, index: number, startNs: number): void {
  const containerId = `sim${index}`;
  const path = `${CNI_PATH}/${PLUGINS[index % PLUGINS.length]}`;
  const truth = newTruth(String(index), path, containerId, plan.plugin.exitCode);
  node.truth.push(truth);
  const files: Files = { stdin: node.file(), stdout: node.file(), stderr: node.file() };
  const plugin = newTask(null, truth);
  const env = cniEnv(plan.command, containerId);
  pluginProcess(node, plan.plugin, plugin, null, path, env, files, truth, startNs, (proc, next) => {
    for (const [h, helper] of plan.helpers.entries()) {
      const task = newTask(null, truth);
      const helperPath = HELPERS[(index + h) % HELPERS.length]!;
      const own = node.file();
      node.at(next(), forkAction(node, proc, task));
      node.at(next(), execAction(node, task, proc, helperPath, env, { stdin: node.file(), stdout: own, stderr: files.stderr }, null));
      for (const size of helper.stdoutWrites) node.at(next(), ioAction(node, task, 'write', 1, own, node.bytes(size)));
      for (const size of helper.stderrWrites) {
        const data = node.bytes(size);
        truth.stderr.push(data);
        node.at(next(), ioAction(node, task, 'write', 2, files.stderr, data));
      }
      node.at(next(), exitAction(node, task, 0));
    }
    if (plan.delegate) {
      const delegatePath = `${CNI_PATH}/${DELEGATES[index % DELEGATES.length]}`;
      const dTruth = newTruth(`${index}d`, delegatePath, `${containerId}-d`, plan.delegate.exitCode);
      node.truth.push(dTruth);
      const dTask = newTask(null, dTruth);
      const forkTs = next();
      node.at(forkTs, (ts) => {
        forkAction(node, proc, dTask)(ts);
        dTruth.parent = truth;
      });
      const dFiles: Files = { stdin: node.file(), stdout: node.file(), stderr: node.file() };
      const exited = pluginProcess(node, plan.delegate, dTask, proc, delegatePath, cniEnv(plan.command, `${containerId}-d`), dFiles, dTruth, next(), () => {});
      // The plugin waits for its delegate's result.
      while (next() <= exited);
    }
  });
}

/** Runs the plan: the kernel prints, bpftrace reads, the daemon's record flow assembles. */
export interface SimOptions {
  /** The daemon's reorder window (default REORDER_WINDOW). */
  readonly window?: ReorderWindowOptions;
  /** Sees every line as bpftrace hands it over, and every event: to look into a failing case. */
  readonly trace?: (what: string) => void;
}

export function simulate(plan: NodePlan, opts: SimOptions = {}): SimResult {
  const window = opts.window ?? REORDER_WINDOW;
  const trace = opts.trace;
  const node = new Node(plan);
  let start = T0_NS + 1_000_000;
  for (const [i, call] of plan.calls.entries()) {
    start += call.gapUs * 1000 + node.int(0, 999);
    scheduleCall(node, call, i, start);
  }
  const actions = node.actions.sort((a, b) => a.ts - b.ts || a.seq - b.seq);

  const events: CollectorEvent[] = [];
  const emit = (e: CollectorEvent) => {
    events.push(e);
    if (trace) trace(`  -> ${e.type} ${e.call.id} ${e.call.plugin} pid ${e.call.pid} ${e.call.status} lost=${e.call.lostRecords} in/out/err ${e.call.stdin.bytes.length}/${e.call.stdout.bytes.length}/${e.call.stderr.bytes.length}`);
  };
  const flow = new RecordFlow({ monoToEpochUs }, { src: SRC, mode: 'full' }, emit, window);
  let nowUs = T0_NS / 1000;
  const ms = (us: number) => us / 1000;
  let lastArrivalUs: number | null = null;
  let nextPublishUs = nowUs + PUBLISH_EVERY_US;
  let clockDueUs: number | null = null;
  const push = (line: string, arrivalUs: number, src = SRC) => {
    if (trace) trace(`${arrivalUs.toFixed(0)}${src === SRC ? '' : ' (standby)'} ${line.length > 60 ? `${line.slice(0, 60)}…` : line}`);
    const malformed = flow.push(Buffer.from(line), src, arrivalUs, ms(arrivalUs));
    if (malformed) throw new Error(`the simulation printed a malformed line: ${malformed.message}`);
    lastArrivalUs = arrivalUs;
  };
  let nextLivenessUs = nowUs + LIVENESS_EVERY_US;
  // The daemon's sweep (collector/liveness.ts), with its settings.
  const sweep = new LivenessSweep(DAEMON_SWEEP);
  /** collector/liveness.ts: a call whose process is gone ends once the stream is past that moment by a margin. */
  const liveness = (t: number) => {
    const { gone, waiting } = sweep.sweep(flow.runningCalls(), { epochUs: monoToEpochUs(t), monoUs: t, releasedTs: flow.releasedTs }, (pid, start) => node.alive.has(`${pid}:${start}`));
    for (const call of gone) flow.processGone(call.pid, call.start, 'the plugin process is gone but its exit was not recorded');
    if (waiting) printCanary(node, t * 1000);
  };
  const armClock = (atUs: number) => {
    if (clockDueUs !== null || flow.heldCount === 0) return;
    const due = flow.clockDueUs(atUs);
    if (due !== null) clockDueUs = atUs + Math.max(1, Math.ceil((due - atUs) / 1000)) * 1000;
  };
  const nextTimerUs = () => Math.min(nextPublishUs, clockDueUs ?? Infinity, nextLivenessUs);
  /** The daemon's timers up to `untilUs`, in time order: the publish tick, the clock release, the liveness sweep. */
  const timersUntil = (untilUs: number) => {
    for (;;) {
      const clockAt = clockDueUs ?? Infinity;
      const t = nextTimerUs();
      if (t > untilUs) return;
      if (t === nextLivenessUs) {
        nextLivenessUs += LIVENESS_EVERY_US;
        liveness(t);
      } else if (t === clockAt) {
        clockDueUs = null;
        flow.releaseByClock(t, ms(t));
        flow.tick(ms(t));
        armClock(t);
      } else {
        nextPublishUs += PUBLISH_EVERY_US;
        flow.releaseDue(t, ms(t));
        flow.tick(ms(t));
        if (flow.heldCount > 0 && lastArrivalUs !== null && t - lastArrivalUs >= QUIET_US) {
          flow.releaseQuiet(t, ms(t));
          flow.tick(ms(t));
        }
      }
    }
  };

  push(`H 1 full ${T0_NS}`, nowUs);
  if (plan.standby) push(`H 1 light ${T0_NS}`, nowUs, STANDBY_SRC);
  const allBuffers = [...node.buffers, ...node.standbyBuffers];
  let a = 0;
  let globalStallUntilUs = 0;
  const pendingLines = () => allBuffers.some((b) => b.pending > 0);
  const lastActionUs = actions.length > 0 ? actions[actions.length - 1]!.ts / 1000 : nowUs;
  for (;;) {
    const idle = !pendingLines();
    // Done when nothing is left to print, read or hold, and no call waits for the liveness sweep (or for too long).
    if (idle && a >= actions.length && flow.heldCount === 0 && (flow.runningCalls().length === 0 || nowUs > lastActionUs + WIND_DOWN_US)) break;
    // Nothing printed and unread: on to the next thing that happens.
    const nextActionUs = a < actions.length ? Math.ceil(actions[a]!.ts / 1000) : Infinity;
    nowUs = idle ? Math.max(nowUs + 1, Math.min(nextActionUs, nextTimerUs())) : nowUs + node.int(50, 1_500);
    timersUntil(nowUs);
    while (a < actions.length && actions[a]!.ts <= nowUs * 1000) {
      const act = actions[a++]!;
      act.run(act.ts);
    }
    if (nowUs < globalStallUntilUs) continue;
    if (node.rng() < plan.drain.globalStallChance) {
      globalStallUntilUs = nowUs + node.int(1, plan.drain.globalStallMaxUs);
      continue;
    }
    // One read round: every CPU buffer in turn, in a random order, some or all of what each holds.
    const order = allBuffers.map((_, i) => i).sort(() => node.rng() - 0.5);
    for (const at of order) {
      const buf = allBuffers[at]!;
      if (buf.stalledUntilUs > nowUs) continue;
      if (node.rng() < plan.drain.cpuStallChance) {
        buf.stalledUntilUs = nowUs + node.int(1, plan.drain.cpuStallMaxUs);
        continue;
      }
      // What has been printed by now (the canary's later records are in already).
      let ready = 0;
      while (ready < buf.pending && buf.entries[buf.head + ready]!.ts <= nowUs * 1000) ready++;
      if (ready === 0) continue;
      const n = node.rng() < 0.6 ? ready : node.int(1, ready);
      for (let i = 0; i < n; i++) {
        const e = buf.entries[buf.head++]!;
        node.stats.maxLagUs = Math.max(node.stats.maxLagUs, nowUs - e.ts / 1000);
        if (e.lost !== undefined) {
          node.stats.lostNotices++;
          push(`Lost ${e.lost} events`, nowUs, buf.src);
        } else {
          node.stats.lines++;
          push(e.line, nowUs, buf.src);
        }
      }
      if (buf.head > 4096) {
        buf.entries = buf.entries.slice(buf.head);
        buf.head = 0;
      }
    }
    armClock(nowUs);
  }
  // The daemon stops: everything held goes on, and every wait is over.
  flow.releaseAll(ms(nowUs));
  for (const later of [3_000_000, 15_000_000, 70_000_000, 140_000_000]) {
    flow.releaseDue(nowUs + later, ms(nowUs + later));
    flow.tick(ms(nowUs + later));
  }
  // As collector.ts stops: what still runs (its exit lost, the liveness sweep not done with it) ends incomplete.
  flow.endAllCalls('the tracer stopped while the call ran');
  const finals = new Map<string, CniCall>();
  for (const e of events) finals.set(e.call.id, e.call);
  // Each true call by the collector's id of its process (the first one, should there be two: the other is a stray).
  const byProcess = new Map<string, string>();
  for (const e of events) if (!byProcess.has(`${e.call.pid}:${e.call.processStart}`)) byProcess.set(`${e.call.pid}:${e.call.processStart}`, e.call.id);
  for (const t of node.truth) t.id = byProcess.get(`${t.pid}:${t.processStart}`) ?? t.id;
  for (const t of node.truth) t.parentId = t.parent?.id ?? null;
  return { truth: node.truth, finals, events, stats: node.stats };
}

/** How bpftrace keeps up: within the reorder window, lagging by seconds, or starved (full buffers). */
export type Load = 'keeps-up' | 'lags' | 'starved';

const sizes = (maxCount: number, maxSize: number, minCount = 0) => fc.array(fc.integer({ min: 1, max: maxSize }), { minLength: minCount, maxLength: maxCount });

const procPlan = (): fc.Arbitrary<ProcPlan> =>
  fc.record({
    threads: fc.integer({ min: 0, max: 3 }),
    // Up to a few KB of config, in reads of any size (Go's ReadAll: 512, then more).
    stdinReads: sizes(5, 1_500, 1),
    stdoutWrites: sizes(3, 700),
    stderrWrites: sizes(2, 300),
    exitCode: fc.constantFrom(0, 0, 0, 1),
  });

export const callPlan = (): fc.Arbitrary<CallPlan> =>
  fc.record({
    gapUs: fc.integer({ min: 0, max: 40_000 }),
    command: fc.constantFrom('ADD', 'DEL', 'CHECK'),
    plugin: procPlan(),
    helpers: fc.array(fc.record({ stdoutWrites: sizes(2, 400), stderrWrites: sizes(2, 300) }), { maxLength: 2 }),
    delegate: fc.option(procPlan(), { freq: 2 }),
  });

/**
 * `keeps-up`: every line arrives within the daemon's smallest reorder window
 * (REORDER_WINDOW.minUs, 30 ms) of its print, no buffer is ever full. `lags`:
 * a CPU buffer, or all of them, may go unread for seconds; nothing lost.
 * `starved`: that, and buffers that fill up and drop records.
 */
export function drainPlan(load: Load): fc.Arbitrary<DrainPlan> {
  switch (load) {
    case 'keeps-up':
      return fc.record({
        cpuStallChance: fc.constantFrom(0, 0.01, 0.05),
        cpuStallMaxUs: fc.integer({ min: 1, max: 12_000 }),
        globalStallChance: fc.constantFrom(0, 0.01),
        globalStallMaxUs: fc.integer({ min: 1, max: 8_000 }),
        capacity: fc.constant(null),
      });
    case 'lags':
      return fc.record({
        cpuStallChance: fc.constantFrom(0.001, 0.005, 0.02),
        cpuStallMaxUs: fc.integer({ min: 10_000, max: 3_000_000 }),
        globalStallChance: fc.constantFrom(0, 0.002, 0.01),
        globalStallMaxUs: fc.integer({ min: 1, max: 500_000 }),
        capacity: fc.constant(null),
      });
    case 'starved':
      return fc.record({
        cpuStallChance: fc.constantFrom(0.001, 0.005, 0.02),
        cpuStallMaxUs: fc.integer({ min: 10_000, max: 3_000_000 }),
        globalStallChance: fc.constantFrom(0, 0.002, 0.01),
        globalStallMaxUs: fc.integer({ min: 1, max: 500_000 }),
        capacity: fc.integer({ min: 20, max: 400 }),
      });
  }
}

export function nodePlan(load: Load, maxCalls = 12): fc.Arbitrary<NodePlan> {
  return fc.record({
    seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
    cpus: fc.integer({ min: 2, max: 4 }),
    standby: fc.boolean(),
    pidPool: fc.integer({ min: 6, max: 24 }),
    stepUs: fc.integer({ min: 5, max: 3_000 }),
    calls: fc.array(callPlan(), { minLength: 1, maxLength: maxCalls }),
    drain: drainPlan(load),
  });
}

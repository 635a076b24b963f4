/**
 * Runs bpftrace with the cnirec program as a child process and hands its
 * output over line by line. One instance is one bpftrace run; the collector
 * supervises and restarts.
 */

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { setPriority } from 'node:os';
import type { Logger } from 'pino';
import { bpftraceEnv, programText, type CaptureMode, type PayloadPath } from '../../bpf/index.js';
import { LineSplitter } from './line-splitter.js';

export interface TracerSettings {
  readonly bpftracePath: string;
  readonly mode: CaptureMode;
  /** Per-CPU perf buffer pages (power of two): room for bursts before records are lost. */
  readonly perfBufferPages: number;
  /** Processes to treat as traced from the start (see bpf/program.ts). */
  readonly seedPids?: readonly number[];
  /** Full mode's payload probes (default: at syscall exit). */
  readonly payloadPath?: PayloadPath;
  /**
   * bpftrace's nice value (-20…19; default TRACER_NICE). A tracer starved of
   * CPU by a busy node cannot empty its buffers, and the kernel drops what no
   * longer fits: the calls then lose bytes (and say so).
   */
  readonly nice?: number;
}

/** Ahead of ordinary work (exec probes, cron, scripts), behind the kernel's own threads. */
export const TRACER_NICE = -10;

export interface TracerExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** The last lines bpftrace wrote to stderr, minus the known harmless ones. */
  readonly stderrTail: readonly string[];
}

export interface TracerHandlers {
  /** One line of bpftrace's stdout, as bytes (valid only during the call). */
  onLine(line: Buffer): void;
  onOverlongLine(bytes: number): void;
  onExit(exit: TracerExit): void;
  /** The process ended (its output may still be read); onExit follows once it all has been. */
  onProcessGone?(): void;
}

export interface RunningTracer {
  readonly pid: number | undefined;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once bpftrace is gone. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL now, synchronously: for exit paths that cannot wait (the process is about to end). */
  killNow(): void;
}

/**
 * util-linux's setpriv, which sets the parent-death signal and then execs
 * bpftrace in place (same pid): the kernel SIGKILLs bpftrace when the daemon
 * dies, however it dies (SIGKILL, the OOM killer, a crash). The signal fires
 * when the thread that spawned it exits; Node spawns from its main thread,
 * which lives as long as the process.
 */
export const SETPRIV_PATH = '/usr/bin/setpriv';
let setprivMissingLogged = false;

function command(settings: TracerSettings, logger: Logger): { file: string; args: string[] } {
  const args = ['-B', 'line', '-e', programText(settings.mode, settings.seedPids ?? [], undefined, settings.payloadPath), settings.mode];
  if (existsSync(SETPRIV_PATH)) return { file: SETPRIV_PATH, args: ['--pdeathsig', 'KILL', settings.bpftracePath, ...args] };
  if (!setprivMissingLogged) {
    setprivMissingLogged = true;
    logger.warn(
      { setpriv: SETPRIV_PATH },
      'setpriv (util-linux) not found: if the daemon is killed, bpftrace keeps running with its probes attached until its next output line; install util-linux',
    );
  }
  return { file: settings.bpftracePath, args };
}

// bpftrace 0.17 says these on every start on kernels that account BPF memory by cgroup.
const HARMLESS_STDERR = [/RLIMIT_MEMLOCK/, /Addrspace mismatch/, /^\s*\$envp = /, /^\s*~+\s*$/, /^\s*$/];
const STDERR_TAIL_LINES = 20;

export function startTracer(settings: TracerSettings, handlers: TracerHandlers, logger: Logger): RunningTracer {
  const { file, args } = command(settings, logger);
  const child = spawn(file, args, {
    env: { ...pickEnv(process.env, ['PATH', 'LANG']), ...bpftraceEnv(settings.perfBufferPages) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid !== undefined) {
    try {
      setPriority(child.pid, settings.nice ?? TRACER_NICE);
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'could not raise bpftrace\'s scheduling priority: on a busy node it may lose records');
    }
  }
  const splitter = new LineSplitter(handlers.onLine, handlers.onOverlongLine);
  const stderrTail: string[] = [];
  const errSplitter = new LineSplitter(
    (bytes) => {
      const line = bytes.toString('utf8');
      if (HARMLESS_STDERR.some((re) => re.test(line))) return;
      stderrTail.push(line);
      if (stderrTail.length > STDERR_TAIL_LINES) stderrTail.shift();
      logger.warn({ stderr: line }, 'bpftrace stderr');
    },
    () => undefined,
  );
  child.stdout.on('data', (chunk: Buffer) => splitter.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => errSplitter.push(chunk));

  let exited = false;
  const done = new Promise<void>((resolve) => {
    let reported = false;
    const report = (code: number | null, signal: NodeJS.Signals | null) => {
      if (reported) return;
      reported = true;
      exited = true;
      splitter.end();
      errSplitter.end();
      handlers.onExit({ code, signal, stderrTail });
      resolve();
    };
    child.on('error', (err) => {
      stderrTail.push(err.message);
      report(null, null);
    });
    // Whichever comes first. A SIGKILLed bpftrace closes its stdout (fd 1, closed first) long before it is
    // reaped: tearing down thousands of perf events and its maps takes hundreds of ms, and records its probes
    // write meanwhile are read by nobody.
    let gone = false;
    const onGone = () => {
      if (gone) return;
      gone = true;
      handlers.onProcessGone?.();
    };
    child.stdout.on('end', onGone);
    child.on('exit', onGone);
    child.on('close', report);
  });

  return {
    pid: child.pid,
    async stop(graceMs = 3000) {
      if (exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await done;
      clearTimeout(timer);
    },
    killNow() {
      if (!exited) child.kill('SIGKILL');
    },
  };
}

function pickEnv(env: NodeJS.ProcessEnv, names: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of names) if (env[n] !== undefined) out[n] = env[n]!;
  return out;
}

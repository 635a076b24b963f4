/**
 * Starting one tracer run, main or standby, until it records: its settings
 * for its role, the processes it counts as traced from the start, and in full
 * mode the check that the syscall-exit payload probe reads right on this
 * kernel (falling back to the syscall-entry probes, once, when it does not).
 */

import type { Logger } from 'pino';
import type { TracerLineError } from '../../bpf/index.js';
import type { CanaryProof } from './record-framer.js';
import type { TracerExit, TracerSettings } from './tracer-process.js';
import { defaultPayloadPath, needsPayloadCheck, recordPayloadVerdict, TracerRun, TracerStartError } from './tracer-run.js';

export type TracerRole = 'main' | 'standby';

/** The sched-only standby prints execs, forks and exits only: a fraction of a full-mode tracer's output. */
const STANDBY_PERF_BUFFER_PAGES = 1024;

/** What a run's events go to, with the run they came from. */
export interface RunEvents {
  onLine(line: Buffer, src: number): TracerLineError | null;
  /** What a run's lines have proved so far (its canary). */
  canaryProof(src: number): CanaryProof;
  /** bpftrace ended; what it printed before may still be read (onExit follows). */
  onGone(run: TracerRun, unexpected: boolean): void;
  /** bpftrace went away and all its output has been read; `unexpected` when it was not asked to. */
  onExit(run: TracerRun, exit: TracerExit, unexpected: boolean): void;
}

export class TracerLauncher {
  /** Runs still compiling or attaching: a stop must end them too. */
  readonly starting = new Set<TracerRun>();
  private nextRunId = 1;

  constructor(
    private readonly events: RunEvents,
    private readonly opts: {
      readonly log: Logger;
      /** How long bpftrace may take to compile, load and prove it sees execs. */
      readonly readyTimeoutMs: number;
      /** The collector's tracer settings now (a mode switch changes them). */
      settings(): TracerSettings;
      /** Whether the collector is stopping: a run that finishes starting then must not outlive the stop. */
      isStopping(): boolean;
    },
  ) {}

  /** Starts a run for `role`; resolves once it records, rejects with bpftrace's own words. */
  async launch(role: TracerRole, seedPids: readonly number[] | undefined): Promise<TracerRun> {
    const { log } = this.opts;
    const settings = this.opts.settings();
    const runSettings: TracerSettings = {
      ...settings,
      ...(role === 'standby' ? { mode: 'light' as const, perfBufferPages: Math.min(settings.perfBufferPages, STANDBY_PERF_BUFFER_PAGES) } : {}),
      ...(seedPids ? { seedPids } : {}),
      ...(settings.payloadPath === undefined ? { payloadPath: defaultPayloadPath() } : {}),
    };
    const run: TracerRun = new TracerRun(
      this.nextRunId++,
      runSettings,
      {
        onLine: this.events.onLine,
        canaryProof: this.events.canaryProof,
        onGone: (unexpected) => this.events.onGone(run, unexpected),
        onExit: (exit, unexpected) => this.events.onExit(run, exit, unexpected),
      },
      log.child({ tracer: role }),
    );
    this.starting.add(run);
    try {
      await run.start(this.opts.readyTimeoutMs);
    } finally {
      this.starting.delete(run);
    }
    if (this.opts.isStopping()) {
      // The collector stopped while it started: it must not outlive the stop.
      await run.stop();
      throw new TracerStartError('the collector stopped while the tracer started');
    }
    if (needsPayloadCheck(run.payloadPath) && settings.payloadPath === undefined) {
      const misread = await run.checkPayloads();
      recordPayloadVerdict(misread === null);
      if (misread === null) {
        log.info("full mode takes payloads at syscall exit (the canary's write read right)");
      } else {
        log.warn(
          { reason: misread },
          "full mode falls back to the syscall-entry payload probes: the syscall-exit probe did not read the canary's write right on this kernel; " +
            'payloads are then what was attempted (a failed or partial write is stored whole) and only fds 0-2 are followed',
        );
        await run.stop();
        return this.launch(role, seedPids);
      }
    }
    log.info({ role, mode: runSettings.mode, payloadPath: run.payloadPath, pid: run.pid }, 'tracer is recording');
    return run;
  }
}

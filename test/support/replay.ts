/**
 * Replays tracer output (recorded fixtures or synthetic lines) through
 * parseTracerLine, a RecordFramer and CallAssembler with a fake clock, in the
 * order the lines come (no sequencer: what the assembler makes of disorder).
 */

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CallAssembler, type AssemblerHeldState, type AssemblerOptions } from '../../collector/assemble/assembler.js';
import { FRAME_WAIT_US, RecordFramer, type Framed } from '../../collector/tracer/record-framer.js';
import { parseTracerLine, type TracerLineError } from '../../bpf/tracer-protocol.js';
import type { CniCall, CollectorEvent } from '../../collector/types.js';

export const EPOCH_OFFSET_US = 1_700_000_000_000_000;
export const monoToEpochUs = (us: number): number => us + EPOCH_OFFSET_US;

/** Where the fake clock ends up after the replay: far past any grace period. */
export const FAR_FUTURE_MS = 1_000_000_000;

export const TRACES_DIR = fileURLToPath(new URL('../fixtures/traces/', import.meta.url));

/** A fixture's lines, as the collector reads them from bpftrace's stdout. */
export function traceLines(name: string): string[] {
  const text = readFileSync(new URL(`../fixtures/traces/${name}`, import.meta.url), 'utf8');
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/** A saved stdin/stdout/stderr of a recorded call, byte-exact. */
export function payload(name: string): Buffer {
  return readFileSync(new URL(`../fixtures/traces/${name}`, import.meta.url));
}

export interface ReplayOptions extends Partial<AssemblerOptions> {
  /** Fake clock step between lines (default 1 ms). */
  msPerLine?: number;
  /** Call tick() after every line, as the daemon's timer would (default true). */
  tickEachLine?: boolean;
  /** How the replay ends: a tick far in the future (default), flushAll, or nothing. */
  end?: 'tick' | 'flushAll' | 'none';
}

/** How long a frame waits for chunk lines that do not come, as the daemon's record flow waits. */
const FRAME_WAIT_MS = FRAME_WAIT_US / 1000;

export interface Replay {
  readonly assembler: CallAssembler;
  readonly framer: RecordFramer;
  /** What the framer and the assembler hold now. */
  heldState(): AssemblerHeldState & { openFrames: number };
  readonly events: CollectorEvent[];
  readonly started: CniCall[];
  readonly finished: CniCall[];
  /** Calls published again after their finish (call.updated). */
  readonly updated: CniCall[];
  readonly parseErrors: TracerLineError[];
  /** The fake clock after the last line (before the end tick). */
  readonly nowMs: number;
  /** Feeds more lines into the same assembler, continuing the clock. */
  feed(lines: Iterable<string>): CollectorEvent[];
  tick(nowMs: number): CollectorEvent[];
  flushAll(reason: string): CollectorEvent[];
}

export function replay(lines: Iterable<string>, opts: ReplayOptions = {}): Replay {
  const { msPerLine = 1, tickEachLine = true, end = 'tick', ...asmOpts } = opts;
  const events: CollectorEvent[] = [];
  const assembler = new CallAssembler({ monoToEpochUs, ...asmOpts }, (e) => events.push(e));
  const framer = new RecordFramer(asmOpts.isOwnCanary);
  const framed: Framed[] = [];
  const parseErrors: TracerLineError[] = [];
  let nowMs = 0;
  /** The events `run` made the assembler emit. */
  const emitted = (run: () => void): CollectorEvent[] => {
    const from = events.length;
    run();
    return events.slice(from);
  };
  /** The frames the framer gave, into the assembler at `atMs`. */
  const assemble = (atMs: number): void => {
    for (const { frame } of framed) assembler.push(frame, atMs);
    framed.length = 0;
  };
  /** The fake clock's tick: frames that waited too long for their lines go on cut, then the assembler's timers. */
  const tick = (t: number): CollectorEvent[] =>
    emitted(() => {
      framer.closeStale(t * 1000, FRAME_WAIT_MS * 1000, framed);
      assemble(t);
      assembler.tick(t);
    });
  const feed = (input: Iterable<string>): CollectorEvent[] => {
    const out: CollectorEvent[] = [];
    for (const line of input) {
      nowMs += msPerLine;
      const parsed = parseTracerLine(line);
      if (!parsed.ok) {
        parseErrors.push(parsed.error);
        continue;
      }
      framer.push(parsed.record, nowMs * 1000, framed);
      out.push(...emitted(() => assemble(nowMs)));
      if (tickEachLine) out.push(...tick(nowMs));
    }
    return out;
  };
  feed(lines);
  const r: Replay = {
    assembler,
    framer,
    heldState: () => ({ ...assembler.heldState(), openFrames: framer.openCount }),
    events,
    get started() {
      return events.filter((e) => e.type === 'call.started').map((e) => e.call);
    },
    get finished() {
      return events.filter((e) => e.type === 'call.finished').map((e) => e.call);
    },
    get updated() {
      return events.filter((e) => e.type === 'call.updated').map((e) => e.call);
    },
    parseErrors,
    nowMs,
    feed,
    tick,
    flushAll: (reason) =>
      emitted(() => {
        framer.closeAll(framed);
        assemble(nowMs);
        assembler.endAllCalls(reason);
      }),
  };
  if (end === 'tick') r.tick(FAR_FUTURE_MS);
  if (end === 'flushAll') r.flushAll('replay ended');
  return r;
}

/** Replays a recorded fixture to its end (tick far in the future). */
export function replayFixture(name: string, opts: ReplayOptions = {}): Replay {
  return replay(traceLines(name), opts);
}

/** The one finished call matching `pred`; fails loudly otherwise. */
export function onlyCall(calls: readonly CniCall[], pred: (c: CniCall) => boolean, what: string): CniCall {
  const found = calls.filter(pred);
  if (found.length !== 1) {
    const seen = calls.map((c) => `${c.plugin}/${c.command}`).join(', ');
    throw new Error(`expected one ${what}, found ${found.length} (calls: ${seen})`);
  }
  return found[0]!;
}

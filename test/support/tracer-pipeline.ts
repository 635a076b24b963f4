/**
 * The collector's line path without bpftrace: bytes → LineSplitter →
 * parseTracerBytes → RecordFramer → RecordSequencer → CallAssembler, wired as
 * the record flow wires them (malformed and overlong lines counted, frames
 * reordered before assembly), with a fake clock.
 */

import { CallAssembler, type AssemblerHeldState, type AssemblerOptions } from '../../collector/assemble/assembler.js';
import { LineSplitter } from '../../collector/tracer/line-splitter.js';
import { RecordFramer, type Framed } from '../../collector/tracer/record-framer.js';
import { RecordSequencer, type Sequenced } from '../../collector/tracer/record-sequencer.js';
import { REORDER_WINDOW, ReorderWindow } from '../../collector/tracer/reorder-window.js';
import { parseTracerBytes, type TracerRecord } from '../../bpf/tracer-protocol.js';
import type { CollectorEvent } from '../../collector/types.js';
import { monoToEpochUs } from './replay.js';

/**
 * TracerRun's longest reorder window, fixed: the fake clock says nothing
 * about arrival lags, so records are held as long as the daemon ever holds them.
 */
const FIXED_WINDOW = { ...REORDER_WINDOW, minUs: REORDER_WINDOW.maxUs };

export interface Pipeline {
  readonly assembler: CallAssembler;
  readonly framer: RecordFramer;
  readonly sequencer: RecordSequencer;
  readonly events: CollectorEvent[];
  /** Records the parser made, in input order (before framing and reordering). */
  readonly parsed: TracerRecord[];
  /** Frames the framer made (and loss notices). */
  framed: number;
  /** Lines refused: parse errors and overlong lines, as TracerRun's malformedLines counts them. */
  malformed: number;
  nowMs: number;
  /** What the framer, the sequencer and the assembler hold now. */
  heldState(): AssemblerHeldState & { openFrames: number; sequenced: number };
  /** Bytes as read from bpftrace's stdout, in whatever pieces the pipe gives. */
  push(bytes: Buffer): void;
  /** The tracer went quiet: everything held goes to the assembler, frames still open cut. */
  quiet(): void;
  tick(nowMs: number): void;
  end(): void;
}

/** `msPerRecord`: how far the fake clock moves for each record (line) parsed. */
export function createPipeline(opts: Partial<AssemblerOptions> = {}, msPerRecord = 1): Pipeline {
  const events: CollectorEvent[] = [];
  const assembler = new CallAssembler({ monoToEpochUs, ...opts }, (e) => events.push(e));
  const framer = new RecordFramer(opts.isOwnCanary);
  const sequencer = new RecordSequencer(new ReorderWindow(FIXED_WINDOW));
  const framed: Framed[] = [];
  const released: Sequenced[] = [];
  const feed = () => {
    for (const { frame } of released) assembler.push(frame, p.nowMs);
    released.length = 0;
  };
  const sequence = () => {
    p.framed += framed.length;
    const openTs = framer.openCount > 0 ? framer.oldestOpenTs() : Infinity;
    for (const f of framed) sequencer.push(f.frame, 0, f.arrivalUs, openTs, released);
    framed.length = 0;
    feed();
  };
  const splitter = new LineSplitter(
    (line) => {
      const r = parseTracerBytes(line);
      if (!r.ok) {
        p.malformed++;
        return;
      }
      p.parsed.push(r.record);
      p.nowMs += msPerRecord;
      if (r.record.kind === 'lost') {
        // A loss notice is a frame of its own, handed on at once (the daemon marks the calls a loss may have hit).
        p.framed++;
        assembler.push(r.record, p.nowMs);
        return;
      }
      framer.push(r.record, p.nowMs * 1000, framed);
      sequence();
    },
    () => {
      p.malformed++;
    },
  );
  const p: Pipeline = {
    assembler,
    framer,
    sequencer,
    events,
    parsed: [],
    framed: 0,
    malformed: 0,
    nowMs: 0,
    heldState: () => ({ ...assembler.heldState(), openFrames: framer.openCount, sequenced: sequencer.heldCount }),
    push: (bytes) => splitter.push(bytes),
    quiet: () => {
      framer.closeAll(framed);
      sequence();
      sequencer.releaseAll(p.nowMs * 1000, Infinity, released);
      feed();
    },
    tick(nowMs) {
      p.nowMs = Math.max(p.nowMs, nowMs);
      assembler.tick(p.nowMs);
    },
    end: () => splitter.end(),
  };
  return p;
}

/** Splits `data` at the given cut points (any numbers: taken modulo the length, sorted). */
export function cutAt(data: Buffer, cuts: readonly number[]): Buffer[] {
  if (data.length === 0) return [data];
  const points = [...new Set(cuts.map((c) => Math.abs(c) % data.length))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const at of points) {
    out.push(data.subarray(from, at));
    from = at;
  }
  out.push(data.subarray(from));
  return out;
}

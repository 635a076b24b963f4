/**
 * The collector's line path without bpftrace: bytes → LineSplitter →
 * parseTracerBytes → RecordSequencer → CallAssembler, wired as TracerRun
 * wires them (malformed and overlong lines counted, records reordered
 * before assembly), with a fake clock.
 */

import { CallAssembler, type AssemblerOptions } from '../../collector/assemble/assembler.js';
import { LineSplitter } from '../../collector/tracer/line-splitter.js';
import { RecordSequencer } from '../../collector/tracer/record-sequencer.js';
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
  readonly sequencer: RecordSequencer;
  readonly events: CollectorEvent[];
  /** Records the parser made, in input order (before reordering). */
  readonly parsed: TracerRecord[];
  /** Lines refused: parse errors and overlong lines, as TracerRun's malformedLines counts them. */
  malformed: number;
  nowMs: number;
  /** Bytes as read from bpftrace's stdout, in whatever pieces the pipe gives. */
  push(bytes: Buffer): void;
  /** The tracer went quiet: everything held goes to the assembler. */
  quiet(): void;
  tick(nowMs: number): void;
  end(): void;
}

/** `msPerRecord`: how far the fake clock moves for each record handed to the assembler. */
export function createPipeline(opts: Partial<AssemblerOptions> = {}, msPerRecord = 1): Pipeline {
  const assembler = new CallAssembler({ monoToEpochUs, ...opts });
  const sequencer = new RecordSequencer(new ReorderWindow(FIXED_WINDOW));
  const feed = (records: readonly TracerRecord[]) => {
    for (const rec of records) {
      p.nowMs += msPerRecord;
      p.events.push(...assembler.push(rec, p.nowMs));
    }
  };
  const splitter = new LineSplitter(
    (line) => {
      const r = parseTracerBytes(line);
      if (!r.ok) {
        p.malformed++;
        return;
      }
      p.parsed.push(r.record);
      feed(sequencer.push(r.record, p.nowMs * 1000));
    },
    () => {
      p.malformed++;
    },
  );
  const p: Pipeline = {
    assembler,
    sequencer,
    events: [],
    parsed: [],
    malformed: 0,
    nowMs: 0,
    push: (bytes) => splitter.push(bytes),
    quiet: () => feed(sequencer.flush()),
    tick(nowMs) {
      p.nowMs = Math.max(p.nowMs, nowMs);
      p.events.push(...assembler.tick(p.nowMs));
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

/**
 * What every part of the call assembler shares: its options, its counters,
 * where its events go and the caller's clock as of the frame or tick being
 * handled. The parts
 * (process table, exec assembly, I/O routing, the call registry) keep their own
 * state; this is the little they all read.
 */

import type { CaptureMode } from '../../bpf/index.js';
import type { CollectorEvent, LostRecordsCause, ParentProcess } from '../types.js';

export interface AssemblerOptions {
  /** Kernel monotonic µs to Unix epoch µs. */
  monoToEpochUs(monoUs: number): number;
  /** Names the untraced process that exec'd a top-level plugin (a port: reads /proc in the daemon). */
  describeParent?(pid: number): ParentProcess | null;
  /**
   * How long to wait after a plugin's exit before it is published, on top of
   * what is known to be outstanding (payload records its exit announced,
   * descendants not seen to end). 0 by default: the sequencer hands the exit
   * on only once nothing older can still come from any CPU.
   */
  finalizeGraceMs?: number;
  /** Per call stream; beyond it bytes are dropped and the stream marked truncated. */
  maxStreamBytes?: number;
  /** Per helper stream. */
  maxHelperStreamBytes?: number;
  captureMode?: CaptureMode;
  /** The node's own netns inode (the daemon's /proc/self/ns/net): changes there read `host`. */
  hostNetnsInode?: string | null;
  /** The inode of a netns path (a port: stat in the daemon), so a pod's changes read with its CNI_NETNS. */
  netnsInodeOf?(path: string): string | null;
  /** Whether an exec is the collector's own canary, known by its pid (a port: see collector/tracer/canary.ts). */
  isOwnCanary?(pid: number, ppid: number): boolean;
}

export interface AssemblerCounters {
  records: number;
  lostEvents: number;
  /** Records no call took: their process never became known, or was let go before they came. */
  unattributed: number;
  callsStarted: number;
  callsFinished: number;
  canaries: number;
  /** Exec records seen twice (same pid and start time to the µs): the repeat is ignored. */
  duplicateExecs: number;
  /** Calls published marked lostRecords, by the first cause. */
  callsMarked: Record<LostRecordsCause, number>;
}

export interface AssemblyContext {
  readonly opts: AssemblerOptions;
  readonly counters: AssemblerCounters;
  /** Where a call's events go as they happen: the collector's one buffer before its subscribers (publisher.ts). */
  readonly emit: (event: CollectorEvent) => void;
  /** The caller's clock (ms) as of the record or tick being handled: what waits are dated by. */
  nowMs: number;
}

export function newCounters(): AssemblerCounters {
  return {
    records: 0,
    lostEvents: 0,
    unattributed: 0,
    callsStarted: 0,
    callsFinished: 0,
    canaries: 0,
    duplicateExecs: 0,
    callsMarked: { 'tracer-lost': 0, 'payload-tracer-cut': 0, 'payloads-never-came': 0, 'early-overflow': 0, 'out-of-order': 0 },
  };
}

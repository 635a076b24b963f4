/**
 * Puts tracer records back in time order. bpftrace drains one per-CPU buffer
 * at a time, so when a process moves between CPUs its exit can be printed
 * before its exec, or a read before the fork that made the reader. Each
 * record with a timestamp is held, together with the chunk lines that belong
 * to it, and records are released oldest first as soon as one of these says
 * nothing older can still come:
 *
 * - every CPU's heartbeat (K) has passed it: a CPU's output is in order, so
 *   its heartbeat at ts means all it printed before ts is out. This is what
 *   releases records within ~20 ms on a busy node. A CPU whose heartbeats
 *   stopped (taken offline) stops counting once the others' are current;
 *   while every heartbeat is stale, bpftrace is catching up on a backlog and
 *   the silent CPU may hold the oldest records, so it still counts;
 * - the stream has moved `windowUs` past it (a bound when heartbeats stall);
 * - the tracer went quiet (the caller calls flush): everything it had is out.
 *
 * Pure: the caller passes the time (kernel monotonic µs, the clock of `ts`).
 *
 * The shipped bpf program prints no heartbeats. An experiment with a 50 Hz
 * profile probe lost payload records under a burst of 200 concurrent plugins:
 * syscall tracepoint programs are preemptible, so a record can be printed
 * after a later heartbeat of its CPU by more than any margin, and the
 * heartbeat rule released calls before their last writes came. Heartbeat
 * handling stays here, off unless a caller feeds K records, for a future
 * watermark that is safe (e.g. one taken after the payload printfs).
 */

import type { TracerRecord } from './tracer-protocol.js';

interface Group {
  readonly ts: number;
  readonly seq: number;
  readonly records: TracerRecord[];
}

export interface SequencerOptions {
  /** CPUs that must have sent a heartbeat before heartbeats release anything (the node's CPU count). */
  readonly cpus?: number;
  /** A CPU whose newest heartbeat is older than this, while another's is not, no longer holds records back. */
  readonly heartbeatSilenceUs?: number;
  /**
   * Released only this far behind the slowest heartbeat: a record whose
   * probe took its timestamp just before the heartbeat's timer interrupt
   * fired is printed just after the heartbeat.
   */
  readonly heartbeatMarginUs?: number;
}

const DEFAULT_HEARTBEAT_SILENCE_US = 200_000;
const DEFAULT_HEARTBEAT_MARGIN_US = 1_000;

export class RecordSequencer {
  /** Held groups, sorted by (ts, seq); `head` is the first not yet released. */
  private held: Group[] = [];
  private head = 0;
  private seq = 0;
  private maxTs = 0;
  private readonly execGroups = new Map<number, Group>();
  private readonly ioGroups = new Map<number, Group>();

  /** Newest heartbeat ts per CPU. */
  private readonly heartbeats = new Map<number, number>();
  private readonly cpus: number;
  private readonly silenceUs: number;
  private readonly marginUs: number;
  /** Where the heartbeats stood when last asked (on a heartbeat or releaseDue). */
  private watermark = -Infinity;

  constructor(
    private readonly windowUs: number,
    options: SequencerOptions = {},
  ) {
    this.cpus = Math.max(1, options.cpus ?? 1);
    this.silenceUs = options.heartbeatSilenceUs ?? DEFAULT_HEARTBEAT_SILENCE_US;
    this.marginUs = options.heartbeatMarginUs ?? DEFAULT_HEARTBEAT_MARGIN_US;
  }

  /**
   * Takes one record; returns the records that may now go on, in order.
   * For a heartbeat, `nowUs` (kernel monotonic) decides which CPUs'
   * heartbeats are stale; by default the newest timestamp seen.
   */
  push(rec: TracerRecord, nowUs?: number): TracerRecord[] {
    switch (rec.kind) {
      case 'heartbeat': {
        // Consumed here: nothing after the sequencer needs it.
        if (rec.ts > (this.heartbeats.get(rec.cpu) ?? -Infinity)) this.heartbeats.set(rec.cpu, rec.ts);
        if (rec.ts > this.maxTs) this.maxTs = rec.ts;
        return this.releaseDue(nowUs ?? this.maxTs);
      }
      case 'exec':
        return this.hold(rec.ts, rec, this.execGroups, rec.pid);
      case 'read':
      case 'write':
        return this.hold(rec.ts, rec, this.ioGroups, rec.tid);
      case 'fork':
      case 'exit':
        return this.hold(rec.ts, rec, null, 0);
      case 'exec-chunk':
      case 'exec-parent':
        return this.attach(this.execGroups.get(rec.pid), rec);
      case 'data-chunk':
        return this.attach(this.ioGroups.get(rec.tid), rec);
      default:
        // thread-exit, lost, hello, noise: no timestamp, nothing depends on their order.
        return [rec];
    }
  }

  /**
   * Releases what every CPU's heartbeat has passed, as of `nowUs`. Called on
   * each heartbeat and from a timer: a CPU going silent lets the others on.
   */
  releaseDue(nowUs: number): TracerRecord[] {
    this.watermark = Math.max(this.watermark, this.heartbeatWatermark(nowUs));
    return this.releaseUpTo(Math.max(this.watermark, this.maxTs - this.windowUs));
  }

  /** Up to where every CPU's output is known to be out; -Infinity while that is unknown. */
  heartbeatWatermark(nowUs: number): number {
    if (this.heartbeats.size < this.cpus) return -Infinity;
    const fresh = (ts: number) => nowUs - ts <= this.silenceUs;
    let anyFresh = false;
    for (const ts of this.heartbeats.values()) if (fresh(ts)) anyFresh = true;
    let min = Infinity;
    for (const ts of this.heartbeats.values()) {
      if (anyFresh && !fresh(ts)) continue;
      if (ts < min) min = ts;
    }
    return min - this.marginUs;
  }

  /** The tracer has nothing more for now: release everything held. */
  flush(): TracerRecord[] {
    return this.releaseUpTo(Infinity);
  }

  get heldCount(): number {
    return this.held.length - this.head;
  }

  private hold(ts: number, rec: TracerRecord, groups: Map<number, Group> | null, key: number): TracerRecord[] {
    const group: Group = { ts, seq: this.seq++, records: [rec] };
    if (groups) groups.set(key, group);
    this.insert(group);
    if (ts > this.maxTs) this.maxTs = ts;
    return this.releaseUpTo(Math.max(this.maxTs - this.windowUs, this.watermark));
  }

  private attach(group: Group | undefined, rec: TracerRecord): TracerRecord[] {
    if (group && this.isHeld(group)) {
      group.records.push(rec);
      return [];
    }
    // Its header was released already (or lost): the assembler decides what it is worth.
    return [rec];
  }

  private isHeld(group: Group): boolean {
    // Groups are released from the front, in order.
    const first = this.held[this.head];
    return first !== undefined && (group.ts > first.ts || (group.ts === first.ts && group.seq >= first.seq));
  }

  private insert(group: Group): void {
    // Input is almost sorted: walk back from the end to the insertion point.
    let i = this.held.length;
    while (i > this.head) {
      const prev = this.held[i - 1]!;
      if (prev.ts < group.ts || (prev.ts === group.ts && prev.seq < group.seq)) break;
      i--;
    }
    this.held.splice(i, 0, group);
  }

  private releaseUpTo(ts: number): TracerRecord[] {
    const out: TracerRecord[] = [];
    while (this.head < this.held.length && this.held[this.head]!.ts <= ts) {
      const group = this.held[this.head++]!;
      for (const r of group.records) out.push(r);
      this.forget(group);
    }
    if (this.head > 1024 && this.head * 2 > this.held.length) {
      this.held = this.held.slice(this.head);
      this.head = 0;
    }
    return out;
  }

  private forget(group: Group): void {
    const first = group.records[0]!;
    if (first.kind === 'exec' && this.execGroups.get(first.pid) === group) this.execGroups.delete(first.pid);
    if ((first.kind === 'read' || first.kind === 'write') && this.ioGroups.get(first.tid) === group) this.ioGroups.delete(first.tid);
  }
}

/**
 * Puts tracer records back in time order. bpftrace drains one per-CPU buffer
 * at a time, so when a process moves between CPUs its exit can be printed
 * before its exec, or a read before the fork that made the reader. Each
 * record with a timestamp is held, together with the chunk lines that belong
 * to it, until the stream has moved `windowUs` past it, or until the tracer
 * goes quiet (everything it had is out then); records are released oldest
 * first. Pure: the caller says when the stream is quiet.
 */

import type { TracerRecord } from './tracer-protocol.js';

interface Group {
  readonly ts: number;
  readonly seq: number;
  readonly records: TracerRecord[];
}

export class RecordSequencer {
  /** Held groups, sorted by (ts, seq); `head` is the first not yet released. */
  private held: Group[] = [];
  private head = 0;
  private seq = 0;
  private maxTs = 0;
  private readonly execGroups = new Map<number, Group>();
  private readonly ioGroups = new Map<number, Group>();

  constructor(private readonly windowUs: number) {}

  /** Takes one record; returns the records that may now go on, in order. */
  push(rec: TracerRecord): TracerRecord[] {
    switch (rec.kind) {
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
    return this.releaseUpTo(this.maxTs - this.windowUs);
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

/**
 * The first stage of the record path: one tracer run's lines → whole frames
 * (bpf/tracer-frames.ts). A header line and the chunk lines that carry its
 * bytes become one frame once they are all in: an exec with its parent's
 * name, path, working directory and argv/env block; a read or write with its
 * payload; a netlink request with its bytes. Every other line is a frame of
 * its own. Nothing after the framer sees a chunk line.
 *
 * A header's chunk lines come through the CPU buffer it did, right after it
 * (one probe run prints them all, on one CPU); bpftrace drains one CPU's
 * buffer at a time and may hand over part of it, then another CPU's, so a
 * thread's next read or write, or another exec of the pid, may come between
 * them. A frame is therefore keyed by the CPU its lines name and the pid or
 * tid (a netlink request by its tid and timestamp, which its M lines repeat).
 * It is given up, cut, when the next header of the same key comes (its lines
 * are certainly all printed before that one), when its tracer says it lost
 * records (the caller closes them all), when it has waited FRAME_WAIT_US for
 * lines that do not come (closeStale), or at the end (closeAll).
 *
 * The framer also keeps the run's proof that it records (CanaryProof): the
 * collector's canary exec seen after the run's hello, and in full mode the
 * canary's known write, checked once, whole.
 *
 * Pure: the caller passes the arrival time (kernel monotonic µs).
 */

import { ChunkedBuffer } from './chunked-buffer.js';
import { CANARY_OUTPUT } from './canary-marks.js';
import { ExecPathParts } from './exec-path-parts.js';
import { BUFFER_READ_LATE_US } from './reorder-window.js';
import {
  EXEC_BLOCK_CAP_BYTES,
  NETLINK_CAP_BYTES,
  PAYLOAD_CAP_BYTES,
  TID_SPACE,
  expectedChunks,
  parseTracerBytes,
  readChunkLine,
  type ChunkLine,
  type TracerFrame,
  type TracerLineError,
  type TracerRecord,
} from '../../bpf/index.js';

/** A frame and when its first line arrived (kernel monotonic µs): how far behind the kernel its tracer reads. */
export interface Framed {
  readonly frame: TracerFrame;
  readonly arrivalUs: number;
}

type ExecLine = Extract<TracerRecord, { kind: 'exec' }>;
type PayloadLine = Extract<TracerRecord, { kind: 'read' | 'write' }>;
type NetlinkLine = Extract<TracerRecord, { kind: 'netlink-send' }>;

/** A frame whose chunk lines are still coming. */
interface Open {
  readonly header: ExecLine | PayloadLine | NetlinkLine;
  readonly bytes: ChunkedBuffer;
  /** Chunk lines still to come. */
  missing: number;
  /** When its header arrived. */
  readonly arrivalUs: number;
  /** An exec's path lines and its parent's name. */
  path: ExecPathParts | null;
  parentComm: string | null;
}

/** What a run proves by its lines: it sees execs (the canary's, after its hello) and, in full mode, reads payloads right. */
export interface CanaryProof {
  /** Canary execs seen after the run's hello. */
  execs: number;
  /** Canary writes seen whole with the known bytes. */
  writesRight: number;
  /** Canary writes seen with other bytes, or cut. */
  writesWrong: number;
}

/**
 * How long a frame waits for its chunk lines (µs since its first line
 * arrived) before it goes on cut. Lost lines are announced (bpftrace's
 * "Lost N events", on which the caller cuts every open frame at once), so
 * this only bounds a wait for lines still in a CPU buffer bpftrace has not
 * read; everything after an open frame waits behind it.
 */
export const FRAME_WAIT_US = BUFFER_READ_LATE_US;

/** Canary processes remembered, for their write: a bound, should their exits be lost. */
const CANARY_PIDS_MAX = 64;
const CANARY_BYTES = Buffer.from(CANARY_OUTPUT);

export class RecordFramer {
  readonly canary: CanaryProof = { execs: 0, writesRight: 0, writesWrong: 0 };
  /** Chunk lines that came with no frame open for them (their header lost, or given up on). */
  strayChunks = 0;
  /** Exec and payload frames open, by frameKey. */
  private readonly open = new Map<number, Open>();
  /** Netlink requests open, by tid (a thread's next request may come amid the last one's lines, through another CPU). */
  private readonly netlink = new Map<number, Open[]>();
  private openNetlink = 0;
  private helloSeen = false;
  private readonly canaryPids = new Set<number>();
  /** The chunk line being read (pushLine), reused. */
  private readonly chunk: ChunkLine = { exec: false, id: 0, cpu: 0, off: 0, hexFrom: 0 };

  constructor(
    /** Whether an exec is the collector's own canary, known by its pid (a port: collector/tracer/canary.ts). */
    private readonly isOwnCanary?: (pid: number, ppid: number) => boolean,
  ) {}

  /**
   * One line as bpftrace printed it, arrived at `arrivalUs`; the frames it
   * completes (or gives up) go to `out`. A chunk line's bytes are decoded
   * straight into its frame; other lines are parsed (tracer-protocol.ts).
   * Returns why the line is malformed, or null.
   */
  pushLine(line: Buffer, arrivalUs: number, out: Framed[]): TracerLineError | null {
    if (readChunkLine(line, this.chunk)) {
      const open = this.open.get(frameKey(this.chunk.exec, this.chunk.id, this.chunk.cpu));
      if (open && open.bytes.addHex(line, this.chunk.hexFrom, this.chunk.off)) {
        if (--open.missing === 0) this.close(frameKey(this.chunk.exec, this.chunk.id, this.chunk.cpu), open, out);
        return null;
      }
      // No frame waits for it, or its hex is bad: what the parser says of it.
    }
    const parsed = parseTracerBytes(line);
    if (!parsed.ok) return parsed.error;
    this.push(parsed.record, arrivalUs, out);
    return null;
  }

  /** One line's record, arrived at `arrivalUs`; the frames it completes (or gives up) go to `out`, in order, with their first line's arrival. */
  push(rec: TracerRecord, arrivalUs: number, out: Framed[]): void {
    switch (rec.kind) {
      case 'exec':
      case 'read':
      case 'write': {
        const key = frameKey(rec.kind === 'exec', rec.kind === 'exec' ? rec.pid : rec.tid, rec.cpu);
        const superseded = this.open.get(key);
        if (superseded) this.close(key, superseded, out);
        const cap = rec.kind === 'exec' ? EXEC_BLOCK_CAP_BYTES : PAYLOAD_CAP_BYTES;
        const open: Open = { header: rec, bytes: new ChunkedBuffer(rec.kind === 'exec' ? rec.blockBytes : rec.len, cap), missing: expectedChunks(rec), arrivalUs, path: null, parentComm: null };
        if (open.missing === 0) this.emit(open, out);
        else this.open.set(key, open);
        return;
      }
      case 'exec-chunk':
      case 'data-chunk': {
        const key = frameKey(rec.kind === 'exec-chunk', rec.kind === 'exec-chunk' ? rec.pid : rec.tid, rec.cpu);
        const open = this.open.get(key);
        if (!open) {
          this.strayChunks++;
          return;
        }
        open.bytes.add(rec.off, rec.data);
        if (--open.missing === 0) this.close(key, open, out);
        return;
      }
      // An exec's other lines come between its X and its B lines.
      case 'exec-parent':
      case 'exec-path-chunk':
      case 'exec-cwd-name': {
        const open = this.open.get(frameKey(true, rec.pid, rec.cpu));
        if (!open) {
          this.strayChunks++;
          return;
        }
        if (rec.kind === 'exec-parent') open.parentComm = rec.comm;
        else if (rec.kind === 'exec-path-chunk') (open.path ??= new ExecPathParts()).addPathChunk(rec.len, rec.off, rec.data);
        else (open.path ??= new ExecPathParts()).addCwdName(rec.depth, rec.name);
        return;
      }
      case 'netlink-send': {
        const open: Open = { header: rec, bytes: new ChunkedBuffer(rec.len, NETLINK_CAP_BYTES), missing: expectedChunks(rec), arrivalUs, path: null, parentComm: null };
        if (open.missing === 0) {
          this.emit(open, out);
          return;
        }
        const of = this.netlink.get(rec.tid);
        if (of) of.push(open);
        else this.netlink.set(rec.tid, [open]);
        this.openNetlink++;
        return;
      }
      case 'netlink-chunk': {
        const of = this.netlink.get(rec.tid);
        const at = of ? of.findIndex((o) => o.header.ts === rec.ts) : -1;
        if (!of || at < 0) {
          this.strayChunks++;
          return;
        }
        const open = of[at]!;
        open.bytes.add(rec.off, rec.data);
        if (--open.missing > 0) return;
        this.dropNetlink(rec.tid, of, at);
        this.emit(open, out);
        return;
      }
      case 'noise':
        return;
      case 'hello':
        // BEGIN runs once every probe is attached: from now on a canary proves the whole program records.
        this.helloSeen = true;
        out.push({ frame: rec, arrivalUs });
        return;
      default:
        out.push({ frame: rec, arrivalUs });
    }
  }

  /** The timestamp (kernel µs) of the oldest frame still waiting for chunk lines; Infinity when none is. */
  oldestOpenTs(): number {
    let oldest = Infinity;
    for (const o of this.open.values()) if (o.header.ts < oldest) oldest = o.header.ts;
    if (this.openNetlink > 0) for (const of of this.netlink.values()) for (const o of of) if (o.header.ts < oldest) oldest = o.header.ts;
    return oldest;
  }

  /** Frames whose header arrived `waitUs` or more before `nowUs` go out cut: their missing lines were lost. */
  closeStale(nowUs: number, waitUs: number, out: Framed[]): void {
    for (const [key, o] of this.open) if (nowUs - o.arrivalUs >= waitUs) this.close(key, o, out);
    if (this.openNetlink === 0) return;
    for (const [tid, of] of this.netlink) {
      for (let i = of.length - 1; i >= 0; i--) {
        const o = of[i]!;
        if (nowUs - o.arrivalUs < waitUs) continue;
        this.dropNetlink(tid, of, i);
        this.emit(o, out);
      }
    }
  }

  /** Every open frame goes out, cut: no more lines will come. */
  closeAll(out: Framed[]): void {
    this.closeStale(Infinity, 0, out);
  }

  /** Frames waiting for chunk lines. */
  get openCount(): number {
    return this.open.size + this.openNetlink;
  }

  private close(key: number, open: Open, out: Framed[]): void {
    this.open.delete(key);
    this.emit(open, out);
  }

  private dropNetlink(tid: number, of: Open[], at: number): void {
    of.splice(at, 1);
    if (of.length === 0) this.netlink.delete(tid);
    this.openNetlink--;
  }

  private emit(open: Open, out: Framed[]): void {
    const h = open.header;
    const whole = open.missing === 0 && open.bytes.complete();
    const bytes = open.bytes.bytes();
    // Built field by field, not spread: this runs for every frame, and a spread makes slow dictionary objects.
    let frame: TracerFrame;
    if (h.kind === 'read' || h.kind === 'write') {
      frame = { kind: h.kind, ts: h.ts, pid: h.pid, tid: h.tid, fd: h.fd, file: h.file, len: h.len, cpu: h.cpu, bytes, whole };
      if (h.kind === 'write' && this.canaryPids.has(h.pid)) this.checkCanaryWrite(bytes, whole);
    } else if (h.kind === 'netlink-send') {
      frame = { kind: h.kind, ts: h.ts, pid: h.pid, tid: h.tid, netns: h.netns, len: h.len, bytes, whole };
    } else {
      const path = open.path === null ? ExecPathParts.headerOnly(h.path) : open.path.filename(h.path);
      frame = {
        kind: 'exec',
        ts: h.ts,
        pid: h.pid,
        ppid: h.ppid,
        parentTraced: h.parentTraced,
        start: h.start,
        stdioFiles: h.stdioFiles,
        argBytes: h.argBytes,
        blockBytes: h.blockBytes,
        cpu: h.cpu,
        path: path.filename,
        pathCut: path.cut,
        cwd: open.path === null ? null : open.path.cwd(),
        parentComm: open.parentComm,
        block: bytes,
        whole,
      };
    }
    out.push({ frame, arrivalUs: open.arrivalUs });
    if (h.kind !== 'exec') return;
    if (this.isOwnCanary?.(h.pid, h.ppid)) {
      if (this.helloSeen) this.canary.execs++;
      this.canaryPids.add(h.pid);
      if (this.canaryPids.size > CANARY_PIDS_MAX) this.canaryPids.delete(this.canaryPids.values().next().value!);
    }
  }

  /** The canary's one write, whole: its bytes are the known payload, or the payload probes misread. */
  private checkCanaryWrite(bytes: Buffer, whole: boolean): void {
    if (whole && bytes.equals(CANARY_BYTES)) this.canary.writesRight++;
    else this.canary.writesWrong++;
  }
}

/** An open exec or payload frame: its id (pid or tid) with the CPU its lines go through above it, execs apart. */
function frameKey(exec: boolean, id: number, cpu: number | undefined): number {
  return id + TID_SPACE * ((cpu ?? 0) * 2 + (exec ? 1 : 0));
}

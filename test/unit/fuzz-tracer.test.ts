/**
 * 100,000+ random and mutated tracer lines through the collector's line path
 * (LineSplitter → parseTracerBytes → RecordFramer → RecordSequencer →
 * CallAssembler): no
 * exception escapes, every line made invalid is counted as malformed and no
 * valid one is, what is published is well-formed, and nothing is parked
 * for good. Seeded (see test/support/fuzz.ts: FC_SEED, FC_RUNS).
 */

import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { parseTracerBytes, parseTracerLine, type TracerRecord } from '../../bpf/tracer-protocol.js';
import type { CniCall } from '../../collector/types.js';
import { callProblems } from '../support/call-invariants.js';
import { fcParams, FC_RUNS_OVERRIDE } from '../support/fuzz.js';
import { chatterLine, formatRecord, garbageLine, invalidCase, scrambledStream, validCase, validLine, lineText, type LineCase } from '../support/fuzz-tracer.js';
import { traceLines } from '../support/replay.js';
import { createPipeline, cutAt, type Pipeline } from '../support/tracer-pipeline.js';
import { execLines, exitLine, forkLine, readLines, writeLines } from '../support/tracer-lines.js';

const MAX_STREAM_BYTES = 4096;
const FIXTURES = ['bridge.trace', 'failing.trace', 'shell.trace', 'sigkill.trace', 'version.trace', 'light.trace', 'running.trace', 'bytes.trace'];
/** Past every wait the assembler has (grace after exit, records waiting for their process). */
const LATER_MS = 60_000;

let linesFed = 0;
/** Properties that ran to the end: the 100,000-line total is checked only for a full run of the file. */
let propertiesDone = 0;
const PROPERTIES = 7;

/** A record as the parser should give it; `ts` compared to the microsecond's float precision. */
function expectRecord(actual: TracerRecord | undefined, expected: TracerRecord, note: string): void {
  expect(actual, note).toBeDefined();
  const a = actual as TracerRecord & { ts?: number };
  const e = expected as TracerRecord & { ts?: number };
  if (e.ts !== undefined) {
    expect(Math.abs((a.ts ?? NaN) - e.ts), `${note}: ts`).toBeLessThanOrEqual(Math.max(1e-6, Math.abs(e.ts) * 1e-12));
  }
  // Buffers compared by hand: toEqual walks them byte by byte, far too slowly for this many lines.
  const ad = 'data' in a ? a.data : undefined;
  const ed = 'data' in e ? e.data : undefined;
  expect(ad === ed || (ad !== undefined && ed !== undefined && ad.equals(ed)), `${note}: data`).toBe(true);
  expect({ ...a, ts: undefined, data: undefined }, note).toEqual({ ...e, ts: undefined, data: undefined });
}

/** Checks every event a pipeline published, and that the assembler can be drained to nothing. */
function expectSoundOutput(p: Pipeline, lost: number | null): void {
  p.quiet();
  p.tick(p.nowMs + LATER_MS);
  // Nothing waits for records that will never come once their time is up.
  const held = p.heldState();
  expect(held.openFrames, 'frames waiting for chunk lines').toBe(0);
  expect(held.sequenced, 'frames waiting in the sequencer').toBe(0);
  expect(held.awaitingParent, 'execs waiting for their parent').toBe(0);
  expect(held.earlyRecords, 'records waiting for their process').toBe(0);

  p.assembler.endAllCalls('fuzz run ended');
  p.tick(p.nowMs + LATER_MS);
  expect(p.heldState()).toEqual({ procs: 0, calls: 0, awaitingParent: 0, earlyRecords: 0, openFrames: 0, sequenced: 0 });

  const started = new Set<string>();
  const finished = new Map<string, CniCall>();
  const problems: string[] = [];
  for (const ev of p.events) {
    problems.push(...callProblems(ev.call, MAX_STREAM_BYTES));
    if (ev.type === 'call.started') {
      if (started.has(ev.call.id)) problems.push(`${ev.call.id} started twice`);
      if (ev.call.status !== 'running') problems.push(`${ev.call.id} started as ${ev.call.status}`);
      started.add(ev.call.id);
    } else {
      if (!started.has(ev.call.id)) problems.push(`${ev.call.id} finished without starting`);
      // Published again (call.updated) only when descendants that outlived the plugin added to it: its end stays what it was.
      const before = finished.get(ev.call.id);
      if (ev.type === 'call.finished' && before) problems.push(`${ev.call.id} sent as call.finished twice`);
      if (ev.type === 'call.updated' && !before) problems.push(`${ev.call.id} updated before it finished`);
      if (before && (before.endedAtUs !== ev.call.endedAtUs || before.status !== ev.call.status)) problems.push(`${ev.call.id} finished twice, differently`);
      if (ev.call.status === 'running') problems.push(`${ev.call.id} finished as running`);
      finished.set(ev.call.id, ev.call);
    }
  }
  expect(problems.join('\n')).toBe('');
  expect(finished.size, 'every call started is finished once the tracer stops').toBe(started.size);
  const c = p.assembler.counters;
  expect(c.callsStarted).toBe(started.size);
  expect(c.callsFinished).toBe(finished.size);
  // Every frame the framer made reached the assembler (the sequencer drops nothing).
  expect(c.records).toBe(p.framed);
  if (lost !== null) expect(c.lostEvents).toBe(lost);
}

const noSecrets = (calls: readonly CniCall[]) => {
  for (const call of calls) expect(JSON.stringify(call.env)).not.toContain('hunter2');
};

describe('tracer lines, one by one', () => {
  it('every valid line parses to its record, through the byte path and the string path alike', () => {
    fc.assert(
      fc.property(validLine, (v) => {
        const line = lineText(v.model);
        linesFed++;
        const fromBytes = parseTracerBytes(Buffer.from(line));
        const fromText = parseTracerLine(line);
        expect(fromBytes.ok && fromText.ok, line.slice(0, 120)).toBe(true);
        if (fromBytes.ok && fromText.ok) {
          expectRecord(fromBytes.record, v.expect, 'bytes');
          expectRecord(fromText.record, v.expect, 'text');
        }
      }),
      fcParams(3_000),
    );
    propertiesDone++;
  });

  it('every line made invalid is refused, by both paths', () => {
    fc.assert(
      fc.property(invalidCase, (c) => {
        linesFed++;
        const fromBytes = parseTracerBytes(Buffer.from(c.line));
        const fromText = parseTracerLine(c.line);
        expect(fromBytes.ok, `${c.note}: ${c.line.slice(0, 120)}`).toBe(false);
        expect(fromText.ok, `${c.note}: ${c.line.slice(0, 120)}`).toBe(false);
        // The error carries no line content (exec blocks may hold secrets).
        const content = c.line.slice(2, 40);
        if (!fromBytes.ok && content.length >= 8) expect(fromBytes.error.message).not.toContain(content);
      }),
      fcParams(5_000),
    );
    propertiesDone++;
  });

  it('any bytes at all: a record or a typed error, never an exception, and both paths agree', () => {
    const truncated = fc.tuple(fc.oneof(validCase, invalidCase), fc.nat()).map(([c, n]) => Buffer.from(c.line).subarray(0, n % (c.line.length + 1)));
    const anyBytes = fc.oneof(
      truncated,
      garbageLine.map((g) => g.bytes),
      fc.uint8Array({ maxLength: 400 }).map((a) => Buffer.from(a)),
      fc.tuple(fc.constantFrom('D ', 'B ', 'B 1 -', 'D 1 ', 'X ', 'Lost ', 'Q 1 2 3 '), fc.uint8Array({ maxLength: 80 })).map(([p, a]) => Buffer.concat([Buffer.from(p), Buffer.from(a)])),
    );
    fc.assert(
      fc.property(anyBytes, (bytes) => {
        linesFed++;
        const fromBytes = parseTracerBytes(bytes);
        const fromText = parseTracerLine(bytes.toString('utf8'));
        expect(fromBytes.ok, bytes.toString('latin1').slice(0, 120)).toBe(fromText.ok);
        if (fromBytes.ok && fromText.ok) expect(fromBytes.record).toEqual(fromText.record);
      }),
      fcParams(12_000),
    );
    propertiesDone++;
  });
});

describe('a stream of lines through splitter, parser, sequencer and assembler', () => {
  type Item = { case: LineCase; crlf: boolean } | { garbage: Buffer } | { overlong: number };
  const item: fc.Arbitrary<Item> = fc.oneof(
    { weight: 10, arbitrary: fc.tuple(validCase, fc.boolean()).map(([c, crlf]) => ({ case: c, crlf })) },
    { weight: 8, arbitrary: fc.tuple(invalidCase, fc.boolean()).map(([c, crlf]) => ({ case: c, crlf })) },
    { weight: 2, arbitrary: fc.tuple(chatterLine, fc.boolean()).map(([c, crlf]) => ({ case: c, crlf })) },
    { weight: 2, arbitrary: garbageLine.map((g) => ({ garbage: g.bytes })) },
    { weight: 1, arbitrary: fc.integer({ min: 64 * 1024 + 1, max: 70_000 }).map((n) => ({ overlong: n })) },
  );

  it('counts exactly the lines made invalid as malformed, and hands on every valid record in order', () => {
    fc.assert(
      fc.property(fc.array(item, { minLength: 1, maxLength: 80 }), fc.array(fc.nat(), { maxLength: 12 }), (items, cuts) => {
        const parts: Buffer[] = [];
        let invalid = 0;
        const expected: TracerRecord[] = [];
        for (const it of items) {
          if ('case' in it) {
            parts.push(Buffer.from(`${it.case.line}${it.crlf ? '\r' : ''}\n`));
            if (it.case.invalid) invalid++;
            else if (it.case.expect.kind !== 'noise') expected.push(it.case.expect);
          } else if ('garbage' in it) {
            parts.push(it.garbage, Buffer.from('\n'));
            invalid++;
          } else {
            parts.push(Buffer.alloc(it.overlong, 'X'), Buffer.from('\n'));
            invalid++;
          }
        }
        linesFed += items.length;
        const p = createPipeline({ maxStreamBytes: MAX_STREAM_BYTES, maxHelperStreamBytes: MAX_STREAM_BYTES });
        for (const piece of cutAt(Buffer.concat(parts), cuts)) p.push(piece);
        p.end();
        expect(p.malformed).toBe(invalid);
        const records = p.parsed.filter((r) => r.kind !== 'noise');
        expect(records.length).toBe(expected.length);
        records.forEach((r, i) => expectRecord(r, expected[i]!, `record ${i}`));
        expectSoundOutput(p, null);
      }),
      fcParams(2_000),
    );
    propertiesDone++;
  });

  it('scrambled process lifecycles (duplicate pids, exits without execs, reordering, wrong offsets, huge lengths) give sound calls', () => {
    const mutation = fc.oneof(
      fc.record({ op: fc.constant('swap' as const), at: fc.nat() }),
      fc.record({ op: fc.constant('drop' as const), at: fc.nat() }),
      fc.record({ op: fc.constant('dup' as const), at: fc.nat() }),
      fc.record({ op: fc.constant('garbage' as const), at: fc.nat(), line: invalidCase }),
    );
    fc.assert(
      fc.property(scrambledStream, fc.array(mutation, { maxLength: 15 }), fc.array(fc.nat(), { maxLength: 6 }), fc.nat({ max: 20 }), (stream, mutations, cuts, tickEvery) => {
        const lines: Array<{ text: string; invalid: boolean; lost: number }> = stream.records.map((r) => ({ text: formatRecord(r), invalid: false, lost: r.kind === 'lost' ? r.count : 0 }));
        for (const m of mutations) {
          const at = m.at % lines.length;
          if (m.op === 'swap' && at + 1 < lines.length) [lines[at], lines[at + 1]] = [lines[at + 1]!, lines[at]!];
          if (m.op === 'drop' && lines.length > 1) lines.splice(at, 1);
          if (m.op === 'dup') lines.splice(at, 0, { ...lines[at]! });
          if (m.op === 'garbage') lines.splice(at, 0, { text: m.line.line, invalid: true, lost: 0 });
        }
        linesFed += lines.length;
        const p = createPipeline({ maxStreamBytes: MAX_STREAM_BYTES, maxHelperStreamBytes: MAX_STREAM_BYTES, finalizeGraceMs: 50 });
        const bytes = Buffer.from(lines.map((l) => `${l.text}\n`).join(''));
        let n = 0;
        for (const piece of cutAt(bytes, cuts)) {
          p.push(piece);
          if (tickEvery > 0 && ++n % tickEvery === 0) {
            p.quiet();
            p.tick(p.nowMs + 20);
          }
        }
        p.end();
        expect(p.malformed).toBe(lines.filter((l) => l.invalid).length);
        expectSoundOutput(p, lines.reduce((sum, l) => sum + l.lost, 0));
        noSecrets(p.events.map((e) => e.call));
      }),
      fcParams(1_500),
    );
    propertiesDone++;
  });

  it('mutated recordings of real traces give sound calls and count exactly the lines broken', () => {
    const fixtures = FIXTURES.map((name) => traceLines(name));
    const EXACT = new Set(['H', 'R', 'W', 'F', 'Q', 'T']);
    /** A guaranteed-invalid version of a recorded line, or null when the line is one of bpftrace's own. */
    const breakLine = (line: string, how: number): string | null => {
      const kind = line[0];
      if (line[1] !== ' ' || kind === undefined) return null;
      if ((kind === 'D' || kind === 'B') && how % 3 === 0) return line.slice(0, -1 - (how % 3));
      // More fields than any form takes: R, W, F and Q of earlier versions take one or two more, T's oldest (one field) three (see the protocol).
      if (EXACT.has(kind) && how % 3 === 1) return kind === 'T' ? `${line} 0 0` : `${line} 0 0 0`;
      return `Z${line.slice(1)}`;
    };
    const mutation = fc.record({ op: fc.constantFrom('drop', 'dup', 'swap', 'break', 'digit', 'shortChunk', 'lost'), at: fc.nat(), how: fc.nat() });
    fc.assert(
      fc.property(fc.nat({ max: fixtures.length - 1 }), fc.array(mutation, { maxLength: 25 }), fc.array(fc.nat(), { maxLength: 8 }), (which, mutations, cuts) => {
        const lines = fixtures[which]!.map((text) => ({ text, invalid: false, lost: 0 }));
        for (const m of mutations) {
          const at = m.at % lines.length;
          const line = lines[at]!;
          if (m.op === 'drop' && lines.length > 1) lines.splice(at, 1);
          else if (m.op === 'dup') lines.splice(at, 0, { ...line });
          else if (m.op === 'swap' && at + 1 < lines.length) [lines[at], lines[at + 1]] = [lines[at + 1]!, line];
          else if (m.op === 'break' && !line.invalid) {
            const broken = breakLine(line.text, m.how);
            if (broken !== null) lines[at] = { text: broken, invalid: true, lost: 0 };
          } else if (m.op === 'digit' && !line.invalid && /^[XFRQ] /.test(line.text)) {
            // Another digit in a number field (not W's fd, not a hex chunk): still valid, now wrong.
            const digits = [...line.text.matchAll(/\d/g)].map((d) => d.index);
            const i = digits[m.how % digits.length]!;
            lines[at] = { text: `${line.text.slice(0, i)}${m.how % 10}${line.text.slice(i + 1)}`, invalid: false, lost: 0 };
          } else if (m.op === 'shortChunk' && !line.invalid && /^[DB] /.test(line.text)) {
            // A chunk cut at a byte boundary: valid, but shorter than the 200 bytes the protocol sends.
            const hexBytes = (line.text.length - line.text.indexOf('\\')) / 4;
            if (hexBytes > 1) lines[at] = { text: line.text.slice(0, -4 * (1 + (m.how % (hexBytes - 1)))), invalid: false, lost: 0 };
          } else if (m.op === 'lost') {
            lines.splice(at, 0, { text: `Lost ${m.how % 100} events`, invalid: false, lost: m.how % 100 });
          }
        }
        linesFed += lines.length;
        const p = createPipeline({ maxStreamBytes: MAX_STREAM_BYTES, maxHelperStreamBytes: MAX_STREAM_BYTES });
        for (const piece of cutAt(Buffer.from(lines.map((l) => `${l.text}\n`).join('')), cuts)) p.push(piece);
        p.end();
        expect(p.malformed).toBe(lines.filter((l) => l.invalid).length);
        expectSoundOutput(p, lines.reduce((sum, l) => sum + l.lost, 0));
      }),
      fcParams(700),
    );
    propertiesDone++;
  });
});

afterAll(() => {
  // The issue asks for 100,000 lines; the default run counts sure it feeds them.
  if (FC_RUNS_OVERRIDE === null && propertiesDone === PROPERTIES && linesFed < 100_000) throw new Error(`only ${linesFed} tracer lines were fed; raise the runs`);
  console.log(`fuzz-tracer: ${linesFed} tracer lines fed`);
});

describe('a long run of calls with records lost at random', () => {
  /** A plugin call as the tracer prints it: exec, stdin, a helper (iptables) writing to stderr, stdout, exits. */
  function lifecycle(pid: number, tsNs: number): string[] {
    const env = { CNI_COMMAND: 'ADD', CNI_PATH: '/opt/cni/bin', CNI_ARGS: 'K8S_POD_NAMESPACE=demo;K8S_POD_NAME=web-0', HOME: '/root' };
    const step = (i: number) => tsNs + i * 1_000_000;
    const start = tsNs - 1;
    return [
      ...execLines({ ts: step(0), pid, ppid: 1, start, path: '/opt/cni/bin/bridge', env, stdio: [9, 10, 11] }),
      ...readLines({ ts: step(1), pid, file: 9 }, `{"cniVersion":"1.0.0","name":"net-${pid}"}`),
      forkLine(step(2), pid, pid + 1),
      ...execLines({ ts: step(3), pid: pid + 1, ppid: pid, start: step(2), path: '/usr/sbin/iptables', argv: ['iptables', '-L'], env }),
      ...writeLines({ ts: step(4), pid: pid + 1, file: 11, fd: 2 }, 'iptables: warning\n'),
      exitLine({ ts: step(5), pid: pid + 1, start: step(2) }),
      ...writeLines({ ts: step(6), pid, file: 10, fd: 1 }, '{"cniVersion":"1.0.0"}'),
      exitLine({ ts: step(7), pid, start }),
    ];
  }

  it('holds a bounded state: what is lost ends as incomplete calls or expires, it does not pile up', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 5, max: 15 }), (seed, lossPercent) => {
        // A small PRNG seeded by fast-check: thousands of drop decisions without generating thousands of values.
        let state = seed;
        const random = () => {
          state = (state * 48_271) % 2_147_483_647;
          return state / 2_147_483_647;
        };
        const CALLS = 1_500;
        // 10 ms of fake clock per record: ~8 calls a second, a busy node.
        const p = createPipeline({ maxStreamBytes: MAX_STREAM_BYTES, finalizeGraceMs: 250 }, 10);
        const max = { procs: 0, calls: 0, awaitingParent: 0, openFrames: 0, earlyRecords: 0 };
        let atOneThird = 0;
        for (let i = 0; i < CALLS; i++) {
          const pid = 10_000 + 2 * i;
          const lines = lifecycle(pid, 1_000_000_000 + i * 100_000_000).map((l) => (random() * 100 < lossPercent ? 'Lost 1 events' : l));
          linesFed += lines.length;
          p.push(Buffer.from(lines.map((l) => `${l}\n`).join('')));
          p.quiet();
          p.tick(p.nowMs);
          // The daemon's liveness sweep: a plugin whose process is gone ends as incomplete.
          for (const call of p.assembler.runningCalls()) if (call.pid < pid - 20) p.assembler.processGone(call.pid, call.start, 'gone');
          const held = p.heldState();
          for (const k of Object.keys(max) as Array<keyof typeof max>) max[k] = Math.max(max[k], held[k]);
          if (i === CALLS / 3) atOneThird = held.procs;
        }
        const atEnd = p.assembler.heldState().procs;
        expect(p.malformed).toBe(0);
        // Helpers whose exit was lost are held for a minute, not for the rest of the run: a steady state
        // (the same at the end as a third of the way), not a pile growing with every call.
        expect(atEnd, `processes held at a third: ${atOneThird}, at the end: ${atEnd}`).toBeLessThanOrEqual(atOneThird * 1.6 + 15);
        expect(max.procs, JSON.stringify(max)).toBeLessThan(CALLS / 5);
        expect(max.calls, JSON.stringify(max)).toBeLessThanOrEqual(30);
        expect(max.awaitingParent + max.openFrames + max.earlyRecords, JSON.stringify(max)).toBeLessThan(CALLS / 5);
        expectSoundOutput(p, null);
      }),
      fcParams(4),
    );
    propertiesDone++;
  });
});

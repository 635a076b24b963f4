/**
 * What the record flow waits for before a call is published, found by the
 * simulation's seed sweep (test/unit/record-flow-simulation.test.ts, `lags`:
 * no call's first publication short of its last): an end held for the
 * payload tracer's copy, and a frame whose chunk lines come seconds after
 * its header.
 */

import { describe, expect, it } from 'vitest';
import { RecordFlow } from '../../collector/record-flow.js';
import type { CollectorEvent } from '../../collector/types.js';
import { execLines, exitLine, forkLine, readLines, writeLines } from '../support/tracer-lines.js';

const MAIN = 1;
const STANDBY = 2;
const MS = 1_000_000; // ns
const ENV = { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c1', CNI_NETNS: '/var/run/netns/x', CNI_IFNAME: 'eth0', CNI_PATH: '/opt/cni/bin' };
const START = 500 * MS;

function feed(flow: RecordFlow, src: number, lines: readonly string[], arrivalUs = 0, nowMs = 0): void {
  for (const line of lines) {
    const malformed = flow.push(Buffer.from(line), src, arrivalUs, nowMs);
    if (malformed) throw new Error(malformed.message);
  }
}

function newFlow(events: CollectorEvent[]): RecordFlow {
  return new RecordFlow({ monoToEpochUs: (us) => us, finalizeGraceMs: 0 }, { src: MAIN, mode: 'full' }, (e) => events.push(e));
}

const ofType = (events: readonly CollectorEvent[], type: CollectorEvent['type']) => events.filter((e) => e.type === type).map((e) => ('call' in e ? e.call : null));

describe('what a call waits for before it is published', () => {
  it("waits while a helper's end is held for its payload tracer's copy, and is published whole the first time", () => {
    const events: CollectorEvent[] = [];
    const flow = newFlow(events);
    const plugin = execLines({ ts: 1000 * MS, pid: 10, ppid: 900, start: START, path: '/opt/cni/bin/bridge', env: ENV, stdio: [1000, 1001, 1002] });
    feed(flow, MAIN, plugin);
    feed(flow, STANDBY, plugin);
    feed(flow, MAIN, readLines({ ts: 1001 * MS, pid: 10, file: 1000 }, '{"cniVersion":"1.0.0"}'));
    for (const src of [MAIN, STANDBY]) feed(flow, src, [forkLine(1002 * MS, 10, 11, 'process')]);
    // The standby saw the helper end first; the main tracer's copy (with its count) and its write are in a CPU buffer read later.
    feed(flow, STANDBY, [exitLine({ ts: 1004 * MS, pid: 11, start: 1002 * MS, ioRecords: 0, clones: 0 })]);
    feed(flow, MAIN, [exitLine({ ts: 1005 * MS, pid: 10, start: START, ioRecords: 1, clones: 1 })]);
    feed(flow, STANDBY, [exitLine({ ts: 1005 * MS, pid: 10, start: START, ioRecords: 0, clones: 0 })]);
    flow.releaseAll(0);
    flow.tick(10_000);
    expect(ofType(events, 'call.finished')).toEqual([]);

    feed(flow, MAIN, writeLines({ ts: 1003 * MS, pid: 11, fd: 2, file: 1002 }, 'helper: done\n'));
    feed(flow, MAIN, [exitLine({ ts: 1004 * MS, pid: 11, start: 1002 * MS, ioRecords: 1, clones: 0 })]);
    flow.releaseAll(10_000);
    flow.tick(20_000);
    const finished = ofType(events, 'call.finished');
    expect(finished).toHaveLength(1);
    expect(finished[0]!.stderr.bytes.toString()).toBe('helper: done\n');
    expect(finished[0]!.lostRecords).toBe(false);
    expect(ofType(events, 'call.updated')).toEqual([]);
  });

  it('waits for an exec whose chunk lines are read seconds after its header (one CPU buffer read late)', () => {
    const events: CollectorEvent[] = [];
    const flow = newFlow(events);
    const lines = execLines({ ts: 1000 * MS, pid: 10, ppid: 900, start: START, path: '/opt/cni/bin/bridge', env: ENV, stdio: [1000, 1001, 1002] });
    const last = lines.length - 1;
    feed(flow, MAIN, lines.slice(0, last), 1_000_000);
    // Three seconds on (past the reorder window's 2 s), the rest of the exec's lines come.
    flow.releaseDue(4_000_000, 3_000);
    feed(flow, MAIN, lines.slice(last), 4_000_000, 3_000);
    feed(flow, MAIN, [exitLine({ ts: 1005 * MS, pid: 10, start: START, ioRecords: 0, clones: 0 })], 4_000_000, 3_000);
    flow.releaseAll(3_000);
    flow.tick(10_000);
    const finished = ofType(events, 'call.finished');
    expect(finished).toHaveLength(1);
    expect(finished[0]!.containerId).toBe('c1');
    expect(finished[0]!.lostRecords).toBe(false);
    expect(flow.stats().strayChunks).toBe(0);
  });

  it('gives up the frames still waiting for lines when their tracer says it lost records', () => {
    const events: CollectorEvent[] = [];
    const flow = newFlow(events);
    const lines = execLines({ ts: 1000 * MS, pid: 10, ppid: 900, start: START, path: '/opt/cni/bin/bridge', env: ENV, stdio: [1000, 1001, 1002] });
    const last = lines.length - 1;
    feed(flow, MAIN, lines.slice(0, last), 1_000_000);
    feed(flow, MAIN, ['Lost 3 events'], 1_100_000);
    // The line it waited for comes after all: no frame takes it any more.
    feed(flow, MAIN, lines.slice(last), 1_100_000);
    expect(flow.stats().strayChunks).toBe(1);
  });
});

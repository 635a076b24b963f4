/**
 * A tracer retired after a capture mode switch (stopped on purpose, once
 * none of its calls looked open) may still have had a call in flight: one
 * whose exec was on its way when that was checked, or whose exit waited for
 * its copy. Those calls' bytes end with it, and they must say so.
 */

import { describe, expect, it } from 'vitest';
import { RecordFlow } from '../../collector/record-flow.js';
import type { CollectorEvent } from '../../collector/types.js';
import { execLines, exitLine, readLines } from '../support/tracer-lines.js';

const OLD = 1;
const NEW = 2;
const MS = 1_000_000; // ns
const ENV = { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c1', CNI_NETNS: '/var/run/netns/x', CNI_IFNAME: 'eth0', CNI_PATH: '/opt/cni/bin' };

function feed(flow: RecordFlow, src: number, lines: readonly string[]): void {
  for (const line of lines) {
    const malformed = flow.push(Buffer.from(line), src, 0, 0);
    if (malformed) throw new Error(malformed.message);
  }
}

function finished(events: readonly CollectorEvent[]) {
  return events.filter((e) => e.type === 'call.finished').map((e) => e.call);
}

describe('a retired tracer and the calls it still supplied', () => {
  const start = 500 * MS;
  const plugin = (flow: RecordFlow) => {
    feed(flow, OLD, execLines({ ts: 1000 * MS, pid: 10, ppid: 900, start, path: '/opt/cni/bin/bridge', env: ENV, stdio: [1000, 1001, 1002] }));
    feed(flow, OLD, readLines({ ts: 1001 * MS, pid: 10, file: 1000 }, '{"cniVersion":"1.0.0"}'));
  };

  it('marks a call still running when the tracer stopped', () => {
    const events: CollectorEvent[] = [];
    const flow = new RecordFlow({ monoToEpochUs: (us) => us }, { src: OLD, mode: 'full' }, (e) => events.push(e));
    plugin(flow);
    flow.setPayloadSource(NEW, 'full', 1002_000);
    flow.releaseAll(0);
    flow.sourceGone(OLD, false, 0);
    feed(flow, NEW, [exitLine({ ts: 1200 * MS, pid: 10, start, ioRecords: 2 })]);
    flow.releaseAll(0);
    flow.tick(0);
    const calls = finished(events);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.lostRecords).toBe(true);
    expect(calls[0]!.lostRecordsCause).toBe('payload-tracer-cut');
  });

  it("marks a call whose exit another tracer reported first, while the retired one's copy (with its count) was awaited", () => {
    const events: CollectorEvent[] = [];
    const flow = new RecordFlow({ monoToEpochUs: (us) => us }, { src: OLD, mode: 'full' }, (e) => events.push(e));
    plugin(flow);
    flow.setPayloadSource(NEW, 'full', 1002_000);
    feed(flow, NEW, [exitLine({ ts: 1003 * MS, pid: 10, start, ioRecords: 0 })]);
    flow.releaseAll(0);
    flow.tick(0);
    expect(finished(events)).toHaveLength(0);
    flow.sourceGone(OLD, false, 0);
    flow.tick(0);
    const calls = finished(events);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.lostRecords).toBe(true);
  });

  it('leaves a call it published whole as it was', () => {
    const events: CollectorEvent[] = [];
    const flow = new RecordFlow({ monoToEpochUs: (us) => us }, { src: OLD, mode: 'full' }, (e) => events.push(e));
    plugin(flow);
    feed(flow, OLD, [exitLine({ ts: 1003 * MS, pid: 10, start, ioRecords: 1 })]);
    flow.releaseAll(0);
    flow.tick(0);
    flow.setPayloadSource(NEW, 'full', 1004_000);
    flow.sourceGone(OLD, false, 0);
    flow.tick(0);
    expect(finished(events).map((c) => [c.lostRecords, c.lostRecordsCause])).toEqual([[false, null]]);
    expect(events.filter((e) => e.type === 'call.updated')).toEqual([]);
  });
});

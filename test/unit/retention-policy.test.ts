// Retention's decisions without timers or a database: when a run is due, how far the size limit deletes, what a
// size-limited run does next (STATUS heartbeats before pod calls), how long it yields, and how the WAL is bounded.
import { describe, expect, it } from 'vitest';
import { SIZE_CALL_PASSES, checkEveryMs, countedBytes, nextSizeStep, overHighWater, runDue, sizeTarget, walBounds, yieldAfterStepMs, type SizeCallPass } from '../../store/retention/retention-policy.js';

const MiB = 1024 * 1024;

describe('retention decisions', () => {
  it('counts pages in use plus the WAL budget, free pages as gone', () => {
    expect(countedBytes({ fileBytes: 100 * MiB, freeBytes: 30 * MiB }, 2 * MiB)).toBe(72 * MiB);
  });

  it.each<[string, number, number, boolean]>([
    ['no limit never deletes', 10 * MiB, 0, false],
    ['under the high-water mark waits', 95 * MiB, 100 * MiB, false],
    ['over the high-water mark deletes', 95 * MiB + 1, 100 * MiB, true],
  ])('%s', (_name, counted, max, over) => {
    expect(overHighWater(counted, max)).toBe(over);
  });

  it('deletes down to the low-water mark, not just under the limit', () => {
    expect(sizeTarget(100 * MiB)).toBe(Math.floor(85 * MiB));
  });

  it.each<[string, number, SizeCallPass[], ReturnType<typeof nextSizeStep>]>([
    ['stops at the target', 85, [], 'done'],
    ['deletes STATUS heartbeats first, never a pod call while one may go', 86, [], 'status'],
    ['then the STATUS calls the readiness timeline names', 86, ['status'], 'status-in-timeline'],
    ['then the oldest calls of any kind', 86, ['status', 'status-in-timeline'], 'calls'],
    ['then closed history, once no call may go', 86, [...SIZE_CALL_PASSES], 'history'],
  ])('in a size-limited run, %s', (_name, counted, done, step) => {
    expect(nextSizeStep(counted, 85, new Set(done))).toBe(step);
  });

  it('starts a run when the interval has passed, else only when the size limit cannot wait, and asks the size only then', () => {
    let asked = 0;
    const size = (over: boolean) => () => (asked++, over);
    expect(runDue(10_000, 10_000, size(false))).toBe(true);
    expect(asked).toBe(0);
    expect(runDue(2_000, 10_000, size(false))).toBe(false);
    expect(runDue(2_000, 10_000, size(true))).toBe(true);
    expect(asked).toBe(2);
    expect(checkEveryMs(1_000, 10_000)).toBe(1_000);
    expect(checkEveryMs(1_000, 500)).toBe(500);
  });

  it('yields at least as long as a step took, and only a turn after a quick one', () => {
    expect([yieldAfterStepMs(0.4), yieldAfterStepMs(1), yieldAfterStepMs(12.5)]).toEqual([0, 1, 12.5]);
  });

  it.each<[string, number, { autocheckpointPages: number; journalSizeLimit: number }, ReturnType<typeof walBounds>]>([
    ['a 32 MiB limit bounds the WAL to 2 MiB', 32 * MiB, { autocheckpointPages: 1000, journalSizeLimit: -1 }, { budgetBytes: 2 * MiB, autocheckpointPages: 128, journalSizeLimit: 2 * MiB }],
    ['never below 1 MiB', 4 * MiB, { autocheckpointPages: 1000, journalSizeLimit: 64 * MiB }, { budgetBytes: MiB, autocheckpointPages: 64, journalSizeLimit: MiB }],
    ['never above 16 MiB, and never raises a lower setting', 10_000 * MiB, { autocheckpointPages: 100, journalSizeLimit: 8 * MiB }, { budgetBytes: 16 * MiB, autocheckpointPages: null, journalSizeLimit: null }],
    ['sets a checkpoint where none is', 32 * MiB, { autocheckpointPages: 0, journalSizeLimit: MiB }, { budgetBytes: 2 * MiB, autocheckpointPages: 128, journalSizeLimit: null }],
  ])('%s', (_name, max, current, bounds) => {
    expect(walBounds(max, 16_384, current)).toEqual(bounds);
  });
});

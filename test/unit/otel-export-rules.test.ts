import { describe, expect, it } from 'vitest';
import { batchOutcome } from '../../otel/export/batch-outcome.js';
import { createOutage } from '../../otel/export/outage.js';
import type { SendResult } from '../../otel/index.js';

const ok: SendResult = { ok: true };
const down: SendResult = { ok: false, error: 'ECONNREFUSED', rejected: null };
const bad: SendResult = { ok: false, error: 'HTTP 400: bad span', rejected: 'bad-request' };
const big: SendResult = { ok: false, error: 'HTTP 413', rejected: 'too-large' };

describe('what the collector’s answers to a batch mean', () => {
  it.each([
    ['both accepted', ok, ok, 10, { done: ['traces', 'logs'], rejected: [], shrink: false, retryError: null }],
    ['traces accepted, logs unreachable: only traces move on', ok, down, 10, { done: ['traces'], rejected: [], shrink: false, retryError: 'ECONNREFUSED' }],
    ['a 400 is skipped, not retried', bad, ok, 10, { done: ['traces', 'logs'], rejected: [{ signal: 'traces', error: 'HTTP 400: bad span' }], shrink: false, retryError: null }],
    ['a 413 for many entries halves the batch', big, ok, 10, { done: ['logs'], rejected: [], shrink: true, retryError: null }],
    ['a 413 for one entry is skipped', ok, big, 1, { done: ['traces', 'logs'], rejected: [{ signal: 'logs', error: 'HTTP 413' }], shrink: false, retryError: null }],
    ['both unreachable', down, down, 10, { done: [], rejected: [], shrink: false, retryError: 'ECONNREFUSED' }],
  ] as const)('%s', (_name, traces, logs, entries, expected) => {
    expect(batchOutcome({ traces, logs }, entries)).toEqual(expected);
  });
});

describe('a collector outage', () => {
  it('starts once, backs off doubling to its cap, and ends once with its length and failures', () => {
    const o = createOutage(1000, 5000);
    expect(o.failed(10_000)).toBe(true);
    expect(o.failed(11_000)).toBe(false);
    expect(o.failed(13_000)).toBe(false);
    expect([o.nextDelayMs(), o.nextDelayMs(), o.nextDelayMs(), o.nextDelayMs()]).toEqual([1000, 2000, 4000, 5000]);
    expect(o.failingSince).toBe(10_000);
    expect(o.succeeded(22_500)).toEqual({ seconds: 12.5, failures: 3 });
    expect(o.succeeded(23_000)).toBeNull();
    expect(o.failingSince).toBeNull();
    expect(o.nextDelayMs()).toBe(1000);
  });
});

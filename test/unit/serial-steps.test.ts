// Watcher steps run one at a time, in order, and one that fails neither stops the next nor the publishing after it.
import { describe, expect, it } from 'vitest';
import { createBatchTopic } from '../../lib/topic.js';
import { createSerialSteps } from '../../lib/serial-steps.js';

describe('serial steps', () => {
  it('runs steps one after another in the order asked, never two at once', async () => {
    const log: string[] = [];
    let running = 0;
    const steps = createSerialSteps(() => undefined);
    const step = (name: string, ms: number) => async () => {
      running++;
      log.push(`${name}:${running}`);
      await new Promise((r) => setTimeout(r, ms));
      running--;
    };
    void steps.run('a', step('a', 20));
    void steps.run('b', step('b', 1));
    await steps.run('c', step('c', 1));
    expect(log).toEqual(['a:1', 'b:1', 'c:1']);
  });

  it('reports a failing step by name, runs the next, and calls `after` after each', async () => {
    const seen: string[] = [];
    const steps = createSerialSteps(
      (err, what) => seen.push(`failed ${what}: ${(err as Error).message}`),
      () => seen.push('after'),
    );
    void steps.run('scan', () => {
      throw new Error('EACCES');
    });
    void steps.run('rescan', () => void seen.push('rescan ran'));
    await steps.idle();
    expect(seen).toEqual(['failed scan: EACCES', 'after', 'rescan ran', 'after']);
  });
});

describe('a batch topic', () => {
  it('publishes what was added since the last flush as one batch, and nothing when nothing was', () => {
    const got: number[][] = [];
    const topic = createBatchTopic<number, (b: readonly number[]) => void>((l, b) => l(b), () => undefined);
    topic.subscribe((b) => got.push([...b]));
    topic.add(1);
    topic.add(2);
    topic.flush();
    topic.flush();
    topic.add(3);
    topic.flush();
    expect(got).toEqual([[1, 2], [3]]);
  });
});

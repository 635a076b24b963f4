// One publisher, many subscribers: each gets every message in order, and one that throws hurts nobody.
import { describe, expect, it } from 'vitest';
import { createTopic } from '../../lib/topic.js';

type Listener = (m: string) => void;

describe('a topic', () => {
  it('delivers each message to every subscriber, in the order they subscribed', () => {
    const got: string[] = [];
    const topic = createTopic<Listener>(() => undefined);
    topic.subscribe((m) => got.push(`a:${m}`));
    topic.subscribe((m) => got.push(`b:${m}`));
    topic.publish((l) => l('1'));
    topic.publish((l) => l('2'));
    expect(got).toEqual(['a:1', 'b:1', 'a:2', 'b:2']);
  });

  it('reports a subscriber that throws, with the subscriber, and still delivers to the others', () => {
    const got: string[] = [];
    const errors: Array<[unknown, Listener]> = [];
    const topic = createTopic<Listener>((err, s) => errors.push([err, s]));
    const broken: Listener = () => {
      throw new Error('client gone');
    };
    topic.subscribe(broken);
    topic.subscribe((m) => got.push(m));
    expect(() => topic.publish((l) => l('x'))).not.toThrow();
    expect(got).toEqual(['x']);
    expect(errors).toEqual([[new Error('client gone'), broken]]);
  });

  it('keeps delivering when reporting the failure fails too', () => {
    const got: string[] = [];
    const topic = createTopic<Listener>(() => {
      throw new Error('logger broke');
    });
    topic.subscribe(() => {
      throw new Error('bad');
    });
    topic.subscribe((m) => got.push(m));
    expect(() => topic.publish((l) => l('y'))).not.toThrow();
    expect(got).toEqual(['y']);
  });

  it('stops delivering to a subscriber once it unsubscribes, and counts who is left', () => {
    const got: string[] = [];
    const topic = createTopic<Listener>(() => undefined);
    const stop = topic.subscribe((m) => got.push(m));
    topic.subscribe(() => undefined);
    expect(topic.size).toBe(2);
    stop();
    topic.publish((l) => l('z'));
    expect([got, topic.size]).toEqual([[], 1]);
  });

  it('delivers once to a subscriber added twice', () => {
    let n = 0;
    const topic = createTopic<Listener>(() => undefined);
    const l: Listener = () => void n++;
    topic.subscribe(l);
    topic.subscribe(l);
    topic.publish((s) => s('once'));
    expect(n).toBe(1);
  });
});

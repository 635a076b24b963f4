import { describe, expect, it } from 'vitest';
import { createGuard } from '../../lib/index.js';

describe('a guard', () => {
  it('returns what the step returns, and reports nothing', () => {
    const errors: unknown[] = [];
    const guard = createGuard((err) => errors.push(err));
    expect(guard(() => 42, 0)).toBe(42);
    expect(errors).toEqual([]);
  });

  it('reports a step that throws once, and returns the fallback instead', () => {
    const errors: unknown[] = [];
    const guard = createGuard((err) => errors.push(err));
    const boom = new Error('database is locked');
    expect(
      guard(() => {
        throw boom;
      }, 'fallback'),
    ).toBe('fallback');
    expect(errors).toEqual([boom]);
    // The next step runs as if nothing had happened.
    expect(guard(() => 'next', 'fallback')).toBe('next');
  });
});

// /healthz is degraded while the tracer lost records lately: how many, within the window.
import { describe, expect, it } from 'vitest';
import { createLossWindow } from '../../api/present/loss-window.js';

const MIN = 60_000;

describe('the lost-records window', () => {
  it('counts losses since the daemon started while that is within the window', () => {
    const w = createLossWindow(0, 10 * MIN);
    w.observe(0, MIN);
    expect(w.recent(MIN)).toBe(0);
    w.observe(11_466, 2 * MIN);
    expect(w.recent(2 * MIN)).toBe(11_466);
  });

  it('forgets losses older than the window, and counts only the new ones', () => {
    const w = createLossWindow(0, 10 * MIN);
    w.observe(100, MIN);
    w.observe(100, 5 * MIN);
    expect(w.recent(11 * MIN + 1)).toBe(0);
    w.observe(130, 12 * MIN);
    expect(w.recent(12 * MIN)).toBe(30);
    expect(w.recent(22 * MIN + 1)).toBe(0);
  });

  it('starts over when the total goes down (a new count)', () => {
    const w = createLossWindow(0, 10 * MIN);
    w.observe(50, MIN);
    w.observe(5, 2 * MIN);
    expect(w.recent(2 * MIN)).toBe(5);
  });
});

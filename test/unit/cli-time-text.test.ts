// Ages as kubectl prints them.
import { describe, expect, it } from 'vitest';
import { ageText } from '../../cli/time-text.js';

describe('an age', () => {
  it.each([
    [0, '0s'],
    [45_000, '45s'],
    [119_000, '119s'],
    [150_000, '2m30s'],
    [12 * 60_000, '12m'],
    [179 * 60_000, '179m'],
    [(3 * 60 + 12) * 60_000, '3h12m'],
    [30 * 3_600_000, '30h'],
    [(2 * 24 + 5) * 3_600_000, '2d5h'],
    [40 * 86_400_000, '40d'],
    [3 * 365 * 86_400_000, '3y'],
    [-5_000, '0s'],
  ])('%d ms is %s', (ms, text) => {
    expect(ageText(ms)).toBe(text);
  });
});

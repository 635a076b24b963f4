/**
 * Checks that need something of the machine (systemd-analyze, Debian 12's
 * apt lists): locally they say why they do not run; under CI (CI=true) that
 * is a failure, never a silent skip.
 */

import { it } from 'vitest';

/** An `it` that runs when `problem` is null; otherwise fails under CI, or skips with the reason locally. */
export function itNeeds(problem: string | null, name: string, fn: () => void | Promise<void>): void {
  if (problem === null) {
    it(name, fn);
  } else if (process.env.CI) {
    it(name, () => {
      throw new Error(`cannot run under CI: ${problem}`);
    });
  } else {
    it.skip(`${name} (skipped: ${problem})`, fn);
  }
}

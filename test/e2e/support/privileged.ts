/**
 * The end-to-end suite needs root and a built CLI. Locally it says why it
 * does not run; under CI (CI=true) that is a failure, never a silent skip.
 */

import { describe, it } from 'vitest';
import { privilegedSuiteProblem } from './daemon.js';

/** True when the suite can run; otherwise registers the failure (CI) or the reason to skip (local). */
export function requirePrivilegedSuite(): boolean {
  const problem = privilegedSuiteProblem();
  if (!problem) return true;
  if (process.env.CI) {
    describe('the privileged end-to-end suite', () => {
      it('can run on this machine', () => {
        throw new Error(`cannot run under CI: ${problem}`);
      });
    });
    return false;
  }
  console.warn(`skipping the end-to-end suite: ${problem}`);
  describe.skip(`end-to-end (skipped: ${problem})`, () => undefined);
  return false;
}

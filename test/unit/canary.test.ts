import { describe, expect, it } from 'vitest';
import { isOwnCanary, runCanary } from '../../collector/tracer/canary.js';

describe('the collector canary', () => {
  it('is known by its pid and this process as its parent, while it runs and after it exited', async () => {
    const pid = runCanary();
    expect(pid).toBeGreaterThan(0);
    expect(isOwnCanary(pid!, process.pid)).toBe(true);
    // Its records may arrive well after it exited.
    await waitForExit(pid!);
    expect(isOwnCanary(pid!, process.pid)).toBe(true);
    // The same pid under another parent is another process (a pid reused).
    expect(isOwnCanary(pid!, process.pid + 1)).toBe(false);
  });

  it('knows no other process', () => {
    expect(isOwnCanary(process.pid, process.ppid)).toBe(false);
  });
});

async function waitForExit(pid: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

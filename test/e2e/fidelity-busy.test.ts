/**
 * A busy node: while two shell loops exec `/bin/true` as fast as they can
 * (exec probes, cron, scripts: pids wrap around every few seconds on a node
 * with the default pid_max), bridge ADD/DEL pairs with a ~48 KiB config run
 * 4 at a time in full mode. Every stored call is compared with what the
 * caller really sent and received: it is byte-exact, or it says it is not
 * (lostRecords, a truncated stream, incomplete). A call stored as complete
 * with other bytes than the real ones fails the test, however rare; how many
 * were exact is reported, and must be most of them. The same case measures
 * the record path under load (bench/results/busy-node.md): CNIREC_BUSY_PAIRS,
 * CNIREC_BUSY_EXEC_LOOPS, CNIREC_BUSY_CPU_LOOPS and CNIREC_BUSY_PAGES set its
 * size, its load and the perf buffer.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rssBytes } from '../../bench/flood-load.js';
import { runBusyNode } from './support/busy-node.js';
import { startDaemon, type RunningDaemon } from './support/daemon.js';
import { health } from './support/faults.js';
import { requirePrivilegedSuite } from './support/privileged.js';

const mib = (bytes: number | null) => (bytes === null ? '?' : `${(bytes / 2 ** 20).toFixed(0)} MiB`);

const canRun = requirePrivilegedSuite();

describe.runIf(canRun)('a busy node (exec loops beside concurrent calls with big configs)', () => {
  let daemon: RunningDaemon;

  beforeAll(async () => {
    // CNIREC_BUSY_PAGES: another perf buffer size, to measure what it changes (bench/results/busy-node.md).
    const pages = process.env.CNIREC_BUSY_PAGES;
    daemon = await startDaemon({ capture: 'full', extraArgs: pages ? ['--perf-buffer-pages', pages] : [] });
  });
  afterAll(async () => {
    await daemon?.stop();
  });

  it('stores every call byte-exact or marked, never silently wrong, each with its delegate', { timeout: 300_000 }, async () => {
    const r = await runBusyNode(daemon, {
      pairs: Number(process.env.CNIREC_BUSY_PAIRS ?? 50),
      workers: 4,
      padBytes: 48 * 1024,
      execLoops: Number(process.env.CNIREC_BUSY_EXEC_LOOPS ?? 2),
      cpuLoops: Number(process.env.CNIREC_BUSY_CPU_LOOPS ?? 0),
    });
    const h = await health(daemon.url);
    const tracerRss = h.tracer.pid === null ? null : rssBytes(h.tracer.pid);
    console.info(
      `busy node: ${r.calls} calls in ${r.seconds.toFixed(1)} s, ${r.exact} byte-exact, ${r.marked} marked (${r.markedWhole} of them whole: ${JSON.stringify(r.reasons)}; the daemon's causes ${JSON.stringify(r.markedBy)}; delegates marked ${JSON.stringify(r.markedDelegates)}), ` +
        `${r.silent.length} silently wrong; ${r.lostRecords} records lost; load average ${r.loadAverage.toFixed(1)}; RSS: main bpftrace ${mib(tracerRss)}, standby ${mib(h.tracer.standby?.rssBytes ?? null)}, daemon ${mib(rssBytes(daemon.process.pid!))}`,
    );
    if (r.markedCut.length > 0) console.info(`marked and cut: ${r.markedCut.slice(0, 10).join('; ')}`);
    expect(r.silent).toEqual([]);
    expect(r.wrongTrees).toEqual([]);
    // Losses are allowed (and marked) when the node starves the tracer; most calls still come through whole.
    expect(r.exact).toBeGreaterThanOrEqual(Math.floor(r.calls * 0.5));
  });
});

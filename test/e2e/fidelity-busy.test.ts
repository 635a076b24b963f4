/**
 * A busy node: while two shell loops exec `/bin/true` as fast as they can
 * (exec probes, cron, scripts: pids wrap around every few seconds on a node
 * with the default pid_max), bridge ADD/DEL pairs with a ~48 KiB config run
 * 4 at a time in full mode. Every stored call is compared with what the
 * caller really sent and received: it is byte-exact, or it says it is not
 * (lostRecords, a truncated stream, incomplete). A call stored as complete
 * with other bytes than the real ones fails the test, however rare; how many
 * were exact is reported, and must be most of them.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredCall } from '../../store/index.js';
import { startDaemon, type RunningDaemon } from './support/daemon.js';
import { health, poll } from './support/faults.js';
import { configBytes, createTestBridgeNetwork, withNetns, withPrevResult, type Netns, type TestBridgeNetwork } from './support/netns.js';
import { CNI_BIN_DIR, execPlugin, type ExecPluginResult } from './support/plugin-driver.js';
import { requirePrivilegedSuite } from './support/privileged.js';

const canRun = requirePrivilegedSuite();

const PAIRS = Number(process.env.CNIREC_BUSY_PAIRS ?? 50);
const WORKERS = 4;
const PAD_BYTES = 48 * 1024;

interface Sent {
  readonly containerId: string;
  readonly command: 'ADD' | 'DEL';
  readonly result: ExecPluginResult;
}

/** What a stored call says about itself when it cannot vouch for its bytes. */
function marked(call: StoredCall): boolean {
  return call.lostRecords || call.status === 'incomplete' || call.stdin.truncated || call.stdout.truncated || call.stderr.truncated;
}

function exact(call: StoredCall, sent: ExecPluginResult): boolean {
  return call.status === 'finished' && call.stdin.bytes.equals(sent.stdinBytes) && call.stdout.bytes.equals(sent.stdout) && call.stderr.bytes.equals(sent.stderr);
}

describe.runIf(canRun)('a busy node (exec loops beside concurrent calls with big configs)', () => {
  let daemon: RunningDaemon;
  const loops: ChildProcess[] = [];
  const networks: TestBridgeNetwork[] = [];
  const namespaces: Netns[] = [];

  beforeAll(async () => {
    daemon = await startDaemon({ capture: 'full', extraArgs: process.env.CNIREC_BUSY_PAGES ? ['--perf-buffer-pages', process.env.CNIREC_BUSY_PAGES] : [] });
    for (let i = 0; i < WORKERS; i++) {
      networks.push(await createTestBridgeNetwork('cnirec-busy'));
      namespaces.push(await withNetns('cnirec-busy'));
    }
  });
  afterAll(async () => {
    for (const l of loops) l.kill('SIGKILL');
    for (const ns of namespaces) await ns.remove();
    for (const n of networks) await n.cleanup();
    await daemon?.stop();
  });

  it('stores every call byte-exact or marked, never silently wrong', { timeout: 300_000 }, async () => {
    for (let i = 0; i < 2; i++) loops.push(spawn('/bin/sh', ['-c', 'while :; do /bin/true; done'], { stdio: 'ignore' }));
    const prefix = `busy${Date.now().toString(36)}`;
    const sent: Sent[] = [];
    let next = 0;
    const worker = async (w: number) => {
      const net = networks[w]!;
      const ns = namespaces[w]!;
      const config = { ...net.config, pad: 'p'.repeat(PAD_BYTES) };
      while (next < PAIRS) {
        const containerId = `${prefix}-${next++}`;
        const base = { plugin: `${CNI_BIN_DIR}/bridge`, containerId, netns: ns.path, ifname: 'eth0' };
        const add = await execPlugin({ ...base, command: 'ADD', stdin: configBytes(config) });
        sent.push({ containerId, command: 'ADD', result: add });
        expect(add.exitCode, add.stderr.toString()).toBe(0);
        const del = await execPlugin({ ...base, command: 'DEL', stdin: configBytes(withPrevResult(config, add.stdout)) });
        sent.push({ containerId, command: 'DEL', result: del });
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
    for (const l of loops) l.kill('SIGKILL');

    // Tolerant of time: a record that came late (a CPU buffer read seconds behind the others) may update a
    // call after it was first published; what is compared is the record once the daemon has caught up.
    await poll(
      'the daemon to catch up',
      async () => {
        const h = await health(daemon.url);
        return h.calls.openCalls === 0 && h.store.pendingWrites === 0;
      },
      60_000,
      () => daemon.logs(),
    );
    const silent: string[] = [];
    let exactCount = 0;
    let markedCount = 0;
    /** Marked, yet the bytes are all there: the price of marking every call a loss may have hit. */
    let markedWhole = 0;
    const reasons = new Map<string, number>();
    for (const s of sent) {
      const call = await daemon.waitFor(
        `the ${s.command} of ${s.containerId}`,
        () => daemon.callsFor(s.containerId).find((c) => c.command === s.command && c.parentId === null && c.status !== 'running'),
        60_000,
      );
      const delegates = daemon.callsFor(s.containerId).filter((c) => c.parentId === call.id);
      if (exact(call, s.result)) exactCount++;
      else if (marked(call)) {
        markedCount++;
        if (call.stdin.bytes.equals(s.result.stdinBytes) && call.stdout.bytes.equals(s.result.stdout)) markedWhole++;
        const why = [call.lostRecords && 'lostRecords', call.status === 'incomplete' && 'incomplete', call.stdin.truncated && 'stdin cut', call.stdout.truncated && 'stdout cut'].filter(Boolean).join('+');
        reasons.set(why, (reasons.get(why) ?? 0) + 1);
      }
      else silent.push(`${s.command} ${s.containerId}: stored stdin ${call.stdin.bytes.length}/${s.result.stdinBytes.length} B, stdout ${call.stdout.bytes.length}/${s.result.stdout.length} B, stderr ${call.stderr.bytes.length}/${s.result.stderr.length} B`);
      // The host-local child of each call is a delegate of it, not a call of its own (nor of another call).
      if (!marked(call)) {
        const all = daemon.callsFor(s.containerId).map((c) => `${c.command} ${c.plugin} id=${c.id} pid=${c.pid} ppid=${c.ppid} parent=${c.parentId} ${c.status}`);
        expect(delegates.map((d) => d.plugin), `${s.command} ${s.containerId}'s delegates (${call.id}); calls of the container: ${all.join('; ')}`).toEqual(['host-local']);
      }
    }
    const h = await health(daemon.url);
    console.info(`busy node: ${sent.length} calls, ${exactCount} byte-exact, ${markedCount} marked (${markedWhole} of them whole), ${silent.length} silently wrong; ${h.tracer.lostEvents} records lost; marked as ${JSON.stringify(Object.fromEntries(reasons))}`);
    expect(silent).toEqual([]);
    // Losses are allowed (and marked) when the node starves the tracer; most calls still come through whole.
    expect(exactCount).toBeGreaterThanOrEqual(Math.floor(sent.length * 0.5));
  });
});

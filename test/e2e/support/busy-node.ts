/**
 * The busy-node case, shared by its e2e test (test/e2e/fidelity-busy.test.ts)
 * and its results (bench/results/busy-node.md): while shell loops exec
 * `/bin/true` as fast as they can (exec probes, cron, scripts: pids wrap
 * every few seconds with the default pid_max), and optionally shell loops
 * that only burn CPU (a node whose load average is far above its CPUs),
 * bridge ADD/DEL pairs with a big config run a few at a time against a
 * recording daemon; once it has caught up, every stored call is compared with
 * what the caller really sent and got.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import type { StoredCall } from '../../../store/index.js';
import type { RunningDaemon } from './daemon.js';
import { health, poll } from './faults.js';
import { configBytes, createTestBridgeNetwork, withNetns, withPrevResult, type Netns, type TestBridgeNetwork } from './netns.js';
import { CNI_BIN_DIR, execPlugin, type ExecPluginResult } from './plugin-driver.js';

export interface BusyNodeOptions {
  readonly pairs: number;
  readonly workers: number;
  readonly padBytes: number;
  /** Shell loops exec'ing /bin/true beside the calls. */
  readonly execLoops: number;
  /** Shell loops that only burn CPU (no exec: no records) beside the calls. */
  readonly cpuLoops?: number;
}

export interface BusyNodeResult {
  readonly calls: number;
  readonly exact: number;
  readonly marked: number;
  /** Marked, yet their bytes are all there: the price of marking every call a loss may have hit. */
  readonly markedWhole: number;
  /** Why the marked ones were marked, counted. */
  readonly reasons: Record<string, number>;
  /** The delegates (host-local) marked lostRecords, by cause: their bytes are not compared, the daemon counts them. */
  readonly markedDelegates: Readonly<Record<string, number>>;
  /** The daemon's count of calls marked lostRecords, by cause (all calls: delegates too). */
  readonly markedBy: Readonly<Record<string, number>>;
  /** Marked calls whose bytes are not whole: what was stored of what was sent. */
  readonly markedCut: readonly string[];
  /** Stored as complete with other bytes than the real ones: must be none. */
  readonly silent: string[];
  /** Calls stored unmarked whose delegates are not exactly their host-local child. */
  readonly wrongTrees: string[];
  readonly lostRecords: number;
  readonly seconds: number;
  /** The node's 1-minute load average as the calls ended. */
  readonly loadAverage: number;
}

interface Sent {
  readonly containerId: string;
  readonly command: 'ADD' | 'DEL';
  readonly result: ExecPluginResult;
}

/** What a stored call says about itself when it cannot vouch for its bytes. */
export function marked(call: StoredCall): boolean {
  return call.lostRecords || call.status === 'incomplete' || call.stdin.truncated || call.stdout.truncated || call.stderr.truncated;
}

function exact(call: StoredCall, sent: ExecPluginResult): boolean {
  return call.status === 'finished' && call.stdin.bytes.equals(sent.stdinBytes) && call.stdout.bytes.equals(sent.stdout) && call.stderr.bytes.equals(sent.stderr);
}

export async function runBusyNode(daemon: RunningDaemon, opts: BusyNodeOptions): Promise<BusyNodeResult> {
  const networks: TestBridgeNetwork[] = [];
  const namespaces: Netns[] = [];
  const loops: ChildProcess[] = [];
  const began = performance.now();
  try {
    for (let i = 0; i < opts.workers; i++) {
      networks.push(await createTestBridgeNetwork('cnirec-busy'));
      namespaces.push(await withNetns('cnirec-busy'));
    }
    for (let i = 0; i < opts.execLoops; i++) loops.push(spawn('/bin/sh', ['-c', 'while :; do /bin/true; done'], { stdio: 'ignore' }));
    for (let i = 0; i < (opts.cpuLoops ?? 0); i++) loops.push(spawn('/bin/sh', ['-c', 'while :; do :; done'], { stdio: 'ignore' }));
    const prefix = `busy${Date.now().toString(36)}`;
    const sent: Sent[] = [];
    let next = 0;
    const worker = async (w: number) => {
      const config = { ...networks[w]!.config, pad: 'p'.repeat(opts.padBytes) };
      while (next < opts.pairs) {
        const containerId = `${prefix}-${next++}`;
        const base = { plugin: `${CNI_BIN_DIR}/bridge`, containerId, netns: namespaces[w]!.path, ifname: 'eth0' };
        const add = await execPlugin({ ...base, command: 'ADD', stdin: configBytes(config) });
        sent.push({ containerId, command: 'ADD', result: add });
        if (add.exitCode !== 0) throw new Error(`bridge ADD failed: ${add.stderr.toString()}${add.stdout.toString()}`);
        const del = await execPlugin({ ...base, command: 'DEL', stdin: configBytes(withPrevResult(config, add.stdout)) });
        sent.push({ containerId, command: 'DEL', result: del });
      }
    };
    await Promise.all(Array.from({ length: opts.workers }, (_, w) => worker(w)));
    const loadAverage = loadavg()[0]!;
    for (const l of loops) l.kill('SIGKILL');
    const seconds = (performance.now() - began) / 1000;

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
    const result = { exact: 0, marked: 0, markedWhole: 0, reasons: {} as Record<string, number>, markedDelegates: {} as Record<string, number>, markedCut: [] as string[], silent: [] as string[], wrongTrees: [] as string[] };
    for (const s of sent) {
      const call = await daemon.waitFor(
        `the ${s.command} of ${s.containerId}`,
        () => daemon.callsFor(s.containerId).find((c) => c.command === s.command && c.parentId === null && c.status !== 'running'),
        60_000,
      );
      if (exact(call, s.result)) {
        result.exact++;
      } else if (marked(call)) {
        result.marked++;
        if (call.stdin.bytes.equals(s.result.stdinBytes) && call.stdout.bytes.equals(s.result.stdout)) result.markedWhole++;
        else result.markedCut.push(`${s.command} ${s.containerId}: stored stdin ${call.stdin.bytes.length}/${s.result.stdinBytes.length} B, stdout ${call.stdout.bytes.length}/${s.result.stdout.length} B`);
        const why = [call.lostRecords && 'lostRecords', call.status === 'incomplete' && 'incomplete', call.stdin.truncated && 'stdin cut', call.stdout.truncated && 'stdout cut'].filter(Boolean).join('+');
        result.reasons[why] = (result.reasons[why] ?? 0) + 1;
      } else {
        result.silent.push(`${s.command} ${s.containerId}: stored stdin ${call.stdin.bytes.length}/${s.result.stdinBytes.length} B, stdout ${call.stdout.bytes.length}/${s.result.stdout.length} B, stderr ${call.stderr.bytes.length}/${s.result.stderr.length} B`);
      }
      // The host-local child of each call is a delegate of it, not a call of its own (nor of another call).
      const delegates = daemon.callsFor(s.containerId).filter((c) => c.parentId === call.id);
      for (const d of delegates.filter((c) => c.lostRecords)) result.markedDelegates[d.lostRecordsCause ?? 'none'] = (result.markedDelegates[d.lostRecordsCause ?? 'none'] ?? 0) + 1;
      if (!marked(call) && (delegates.length !== 1 || delegates[0]!.plugin !== 'host-local')) {
        const all = daemon.callsFor(s.containerId).map((c) => `${c.command} ${c.plugin} id=${c.id} pid=${c.pid} ppid=${c.ppid} parent=${c.parentId} ${c.status}`);
        result.wrongTrees.push(`${s.command} ${s.containerId} (${call.id}): ${all.join('; ')}`);
      }
    }
    const h = await health(daemon.url);
    return { calls: sent.length, ...result, lostRecords: h.tracer.lostEvents, markedBy: h.calls.callsMarked ?? {}, seconds, loadAverage };
  } finally {
    for (const l of loops) l.kill('SIGKILL');
    for (const ns of namespaces) await ns.remove();
    for (const n of networks) await n.cleanup();
  }
}

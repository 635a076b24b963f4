/**
 * The flood: a trivial CNI plugin exec'd as fast as this machine can, from
 * several parallel shell loops, while the daemon's memory and its API's
 * responsiveness are sampled. Shared by bench/flood.ts (the soak benchmark)
 * and test/e2e/faults-flood.test.ts.
 *
 * Each loop is one bash process with no CNI_COMMAND of its own (set per
 * exec only), so the tracer sees each plugin as a runtime-made call, never
 * the loop itself.
 */

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, import.meta.dirname.includes(`${path.sep}dist${path.sep}`) ? '../..' : '..');
export const TRIVIAL_PLUGIN_DIR = path.join(ROOT, 'test/e2e/fixtures/plugins');
export const TRIVIAL_PLUGIN = path.join(TRIVIAL_PLUGIN_DIR, 'trivial.sh');

const LOOP = `
end=$((SECONDS + $1)); n=0
while (( SECONDS < end )); do
  CNI_COMMAND=ADD CNI_CONTAINERID="$2-$n" CNI_NETNS=/var/run/netns/none CNI_IFNAME=eth0 CNI_PATH="$3" "$4" </dev/null >/dev/null
  n=$((n + 1))
done
echo "$n"
`;

export interface FloodOptions {
  readonly seconds: number;
  readonly loops: number;
  /** Container ids are `<prefix>-<loop>-<n>`. */
  readonly prefix: string;
  /** The daemon: its RSS is sampled. */
  readonly daemonPid: number;
  /** The daemon's API: /healthz is timed to find the longest stall. */
  readonly url: string;
  readonly sampleEveryMs?: number;
}

export interface FloodResult {
  readonly callsMade: number;
  readonly seconds: number;
  readonly callsPerSecond: number;
  /** Daemon RSS (VmRSS, bytes) every sample: [ms since start, bytes]. */
  readonly rss: ReadonlyArray<readonly [number, number]>;
  readonly peakRssBytes: number;
  /** The slowest /healthz answer while flooding: how long the daemon's event loop (writes included) was stuck at worst. */
  readonly longestApiStallMs: number;
}

export function rssBytes(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

function loop(seconds: number, prefix: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', LOOP, 'flood', String(seconds), prefix, TRIVIAL_PLUGIN_DIR, TRIVIAL_PLUGIN], {
      env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.on('error', reject);
    child.on('close', () => resolve(Number(out.trim()) || 0));
  });
}

export async function flood(opts: FloodOptions): Promise<FloodResult> {
  const t0 = Date.now();
  const rss: Array<[number, number]> = [];
  let longestApiStallMs = 0;
  let running = true;
  const sampler = (async () => {
    while (running) {
      rss.push([Date.now() - t0, rssBytes(opts.daemonPid)]);
      const asked = performance.now();
      await fetch(`${opts.url}/healthz`).then((r) => r.arrayBuffer()).catch(() => undefined);
      longestApiStallMs = Math.max(longestApiStallMs, performance.now() - asked);
      await new Promise((r) => setTimeout(r, opts.sampleEveryMs ?? 250));
    }
  })();
  const counts = await Promise.all(Array.from({ length: opts.loops }, (_, i) => loop(opts.seconds, `${opts.prefix}-${i}`)));
  const seconds = (Date.now() - t0) / 1000;
  running = false;
  await sampler;
  const callsMade = counts.reduce((a, b) => a + b, 0);
  return {
    callsMade,
    seconds,
    callsPerSecond: callsMade / seconds,
    rss,
    peakRssBytes: Math.max(0, ...rss.map(([, b]) => b)),
    longestApiStallMs: Math.round(longestApiStallMs),
  };
}

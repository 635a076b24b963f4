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

// $1 seconds, $2 container id prefix, $3 CNI_PATH, $4 plugin, $5 its stdin, $6 µs between calls (0: no pause).
// The pause is `read -t` on a pipe nobody writes: a sleep without a process, so pacing costs no fork.
const LOOP = `
end=$((SECONDS + $1)); n=0
if (( $6 > 0 )); then exec {pause}<> <(:); fi
next=\${EPOCHREALTIME/./}
while (( SECONDS < end )); do
  CNI_COMMAND=ADD CNI_CONTAINERID="$2-$n" CNI_NETNS=/var/run/netns/none CNI_IFNAME=eth0 CNI_PATH="$3" "$4" <"$5" >/dev/null
  n=$((n + 1))
  if (( $6 > 0 )); then
    next=$((next + $6)); wait_us=$((next - \${EPOCHREALTIME/./}))
    if (( wait_us > 0 )); then printf -v t '%d.%06d' $((wait_us / 1000000)) $((wait_us % 1000000)); read -t "$t" -u "$pause"; fi
  fi
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
  /** Calls a second across all loops, paced; default: as fast as the loops go. */
  readonly rate?: number;
  /** The plugin to exec (default: the trivial one, which reads nothing). */
  readonly plugin?: string;
  /** The file every call gets on stdin (default: /dev/null). */
  readonly stdinFile?: string;
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

function loop(seconds: number, prefix: string, plugin: string, stdinFile: string, periodUs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', LOOP, 'flood', String(seconds), prefix, path.dirname(plugin), plugin, stdinFile, String(periodUs)], {
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
  const periodUs = opts.rate ? Math.round((opts.loops * 1e6) / opts.rate) : 0;
  const plugin = opts.plugin ?? TRIVIAL_PLUGIN;
  const stdinFile = opts.stdinFile ?? '/dev/null';
  const counts = await Promise.all(Array.from({ length: opts.loops }, (_, i) => loop(opts.seconds, `${opts.prefix}-${i}`, plugin, stdinFile, periodUs)));
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

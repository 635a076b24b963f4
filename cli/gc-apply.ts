/**
 * `cnirec gc --apply` for one leaked attachment, as libcni's GC frees one:
 * the runtime is asked again just before (a sandbox it lists now is left
 * alone), the cache file is read again (what the DEL runs with), then its
 * network's plugins run DEL in reverse order with the cached config, netns and
 * args (collector/runtime/gc-del.ts); once every plugin succeeded the cache
 * file is removed, as libcni does. Each plugin runs as any runtime runs it, so
 * the daemon records the DEL like any other call, its caller this process.
 */

import { accessSync, constants, rmSync } from 'node:fs';
import path from 'node:path';
import { delPlanOf, readCacheDirsOnce, type CriClient, type GcPlanItem } from '../collector/index.js';
import { runPlugin } from './plugin-runner.js';

/** A DEL that takes longer is stuck: killed, reported failed. */
const PLUGIN_TIMEOUT_MS = 60_000;

export type GcOutcome =
  | { readonly result: 'freed'; readonly plugins: readonly string[]; readonly reservationsLeft: readonly string[] }
  | { readonly result: 'failed'; readonly plugin: string | null; readonly error: string }
  | { readonly result: 'skipped'; readonly why: string }
  | { readonly result: 'not-run'; readonly why: string };

/** The first executable `type` in the bin dirs, as libcni's FindInPath looks. */
function findPlugin(type: string, binDirs: readonly string[]): string | null {
  if (type.includes('/')) return null;
  for (const dir of binDirs) {
    const p = path.join(dir, type);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // next dir
    }
  }
  return null;
}

/** The plugin's own words: the CNI error's msg (and details) on stdout, else stderr, else how it ended. */
export function pluginError(stdout: Buffer, stderr: Buffer, exitCode: number | null, signal: string | null): string {
  try {
    const e = JSON.parse(stdout.toString('utf8')) as { msg?: unknown; details?: unknown; code?: unknown };
    if (typeof e.msg === 'string' && e.msg !== '') return `${e.msg}${typeof e.details === 'string' && e.details !== '' ? `: ${e.details}` : ''}${typeof e.code === 'number' ? ` (CNI error ${e.code})` : ''}`;
  } catch {
    // not a CNI error
  }
  const text = stderr.toString('utf8').trim().split('\n').at(-1) ?? '';
  if (text !== '') return text;
  return signal !== null ? `killed by ${signal}${signal === 'SIGKILL' ? ` (no answer within ${PLUGIN_TIMEOUT_MS / 1000} s)` : ''}` : `exit ${exitCode ?? '?'} without a message`;
}

export interface ApplyContext {
  readonly client: CriClient;
  readonly binDirs: readonly string[];
  /** host-local's data dirs: whether the DEL released the reservations. */
  readonly hostLocalDirs: readonly string[];
}

export async function applyOne(item: GcPlanItem, ctx: ApplyContext): Promise<GcOutcome> {
  // Asked again just before: a sandbox made or recovered since the plan is never touched.
  const listed = await ctx.client.listPodSandbox();
  if (listed.some((s) => s.id === item.containerId)) return { result: 'skipped', why: 'the runtime lists its sandbox now: not touched' };
  if (item.cachePath === null) return { result: 'not-run', why: item.why ?? 'no cache entry to DEL with' };
  const entry = readCacheDirsOnce([path.dirname(item.cachePath)], []).entries.find((e) => e.path === item.cachePath);
  if (!entry) return { result: 'skipped', why: `${item.cachePath} is gone already (freed meanwhile)` };
  const planned = delPlanOf(entry);
  if (!planned.ok) return { result: 'not-run', why: planned.why };
  const { plan } = planned;
  const binaries = plan.steps.map((s) => ({ step: s, binary: findPlugin(s.type, ctx.binDirs) }));
  const missing = binaries.find((b) => b.binary === null);
  if (missing) return { result: 'failed', plugin: missing.step.type, error: `plugin "${missing.step.type}" is in none of ${ctx.binDirs.join(', ')}: nothing was run (give its dir with --cni-bin-dir)` };
  const ran: string[] = [];
  for (const { step, binary } of binaries) {
    const out = await runPlugin({
      plugin: binary!,
      command: 'DEL',
      containerId: plan.env.CNI_CONTAINERID!,
      netns: plan.env.CNI_NETNS!,
      ifname: plan.env.CNI_IFNAME!,
      cniArgs: plan.env.CNI_ARGS!,
      cniPath: ctx.binDirs.join(':'),
      stdin: step.stdin,
      timeoutMs: PLUGIN_TIMEOUT_MS,
    });
    if (out.exitCode !== 0 || out.signal !== null) return { result: 'failed', plugin: step.type, error: pluginError(out.stdout, out.stderr, out.exitCode, out.signal) };
    ran.push(step.type);
  }
  // libcni removes the cached result once the whole list's DEL succeeded.
  rmSync(item.cachePath, { force: true });
  const left = readCacheDirsOnce([], ctx.hostLocalDirs).allocations.filter((a) => a.containerId === item.containerId && item.reservationPaths.includes(a.path)).map((a) => a.path);
  return { result: 'freed', plugins: ran, reservationsLeft: left };
}

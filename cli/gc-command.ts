/**
 * `cnirec gc`: what libcni's GC would free on this node, judged from the
 * runtime's sandbox list: attachments (libcni's cache entries, host-local's
 * reservations) whose container id the runtime does not list. A dry run by
 * default; `--apply` runs the DEL of each, one at a time, asking the runtime
 * again just before each (gc-apply.ts). It reads the node itself (run it on
 * the node, as root) and refuses, running nothing, while the runtime cannot
 * be asked. Exit status: 0 done (dry run, or every DEL succeeded), 1 when the
 * runtime cannot be asked or a DEL failed, 2 on a usage error.
 */

import {
  cachedAttachmentOf,
  connectRuntime,
  createCriClient,
  CriCallError,
  delPlanOf,
  gcPlanOf,
  judgeLeaks,
  mergeAttachments,
  pluginDirsOf,
  readCacheDirsOnce,
  reservationOf,
  type CacheEntry,
  type CriClient,
  type GcPlanItem,
} from '../collector/index.js';
import type { z } from 'zod';
import { presentGcPlanItem } from '../api/index.js';
import { parseDuration, settings } from '../daemon/index.js';
import type { ClientOptions } from './api-client.js';
import { ClientError, UsageError } from './errors.js';
import { parseCommand } from './flags.js';
import { applyOne, type GcOutcome } from './gc-apply.js';
import { formatGc } from './gc-format.js';
import { stdout } from './output.js';

const GC_USAGE =
  'usage: cnirec gc [--apply] [--cri-endpoint PATH|none] [--cni-bin-dir D]... [--cni-cache-dirs D,…] [--host-local-dirs D,…] [--min-age DURATION] [--json]';

/** The two checks of an attachment (the plan's list, then the one just before its DEL) are at least this far apart. */
const RECHECK_GAP_MS = 2_000;
const DEFAULT_MIN_AGE = '1m';
const DEFAULT_BIN_DIR = '/opt/cni/bin';

/** A daemon setting's value for this command, checked by the daemon's own schema: its flag, else its CNIREC_* variable, else the default. */
function settingValue<T>(schema: z.ZodType<T, string>, text: string, flagText: string): T {
  const r = schema.safeParse(text);
  if (!r.success) throw new UsageError(`${flagText}: ${r.error.issues[0]?.message ?? 'invalid'}`, GC_USAGE);
  return r.data;
}

const refuse = (why: string) => new ClientError(`cannot ask the container runtime which sandboxes it has (${why.replace(/\.$/, '')}), so no attachment can be confirmed leaked: nothing was run.`);

export async function gcCommand(args: string[], _client: ClientOptions): Promise<number> {
  const { values } = parseCommand(
    args,
    {
      apply: { type: 'boolean' },
      'cri-endpoint': { type: 'string' },
      'cni-bin-dir': { type: 'string', multiple: true },
      'cni-cache-dirs': { type: 'string' },
      'host-local-dirs': { type: 'string' },
      'min-age': { type: 'string' },
      json: { type: 'boolean' },
    },
    GC_USAGE,
  );
  const env = process.env;
  const endpoint = settingValue(settings.criEndpoint.schema, values['cri-endpoint'] ?? env.CNIREC_CRI_ENDPOINT ?? settings.criEndpoint.default(), '--cri-endpoint');
  const cacheDirs = settingValue(settings.cniCacheDirs.schema, values['cni-cache-dirs'] ?? env.CNIREC_CNI_CACHE_DIRS ?? settings.cniCacheDirs.default(), '--cni-cache-dirs');
  const hostLocalDirs = settingValue(settings.hostLocalDirs.schema, values['host-local-dirs'] ?? env.CNIREC_HOST_LOCAL_DIRS ?? settings.hostLocalDirs.default(), '--host-local-dirs');
  const minAgeText = values['min-age'] ?? DEFAULT_MIN_AGE;
  const minAge = parseDuration(minAgeText);
  if (!minAge.ok) throw new UsageError(`--min-age: ${minAge.message}`, GC_USAGE);
  const givenBinDirs = (values['cni-bin-dir'] ?? (env.CNIREC_CNI_BIN_DIR ? [env.CNIREC_CNI_BIN_DIR] : [])).flatMap((d) => d.split(',')).map((d) => d.trim()).filter((d) => d !== '');
  for (const d of givenBinDirs) if (!d.startsWith('/')) throw new UsageError(`--cni-bin-dir takes absolute directories, not "${d}"`, GC_USAGE);

  let client: CriClient | null = null;
  let runtime: string;
  let binDirs: string[];
  let first: { atMs: number; ids: Set<string> };
  try {
    const c = await connectRuntime(endpoint, (p) => createCriClient(p));
    client = c.client;
    runtime = `${c.version.name} ${c.version.version} at ${client.endpoint}`;
    const status = await client.status(true);
    const ready = status.conditions.find((x) => x.type === 'RuntimeReady');
    if (ready && !ready.status) throw refuse(`${runtime} says RuntimeReady=false${ready.reason ? ` (${ready.reason})` : ''}: it may be starting, and not list every sandbox yet`);
    binDirs = givenBinDirs.length > 0 ? givenBinDirs : (pluginDirsOf(status.info) ?? [DEFAULT_BIN_DIR]);
    first = { atMs: Date.now(), ids: new Set((await client.listPodSandbox()).map((s) => s.id)) };
  } catch (err) {
    // Its open connection would keep the process alive after the refusal.
    client?.close();
    if (err instanceof CriCallError) throw refuse(err.problem.message);
    throw err;
  }
  const asked: CriClient = client;

  try {
    const files = readCacheDirsOnce(cacheDirs, hostLocalDirs);
    const byPath = new Map<string, CacheEntry>(files.entries.map((e) => [e.path, e]));
    const attachments = mergeAttachments(
      files.entries.map(cachedAttachmentOf).filter((a) => a !== null),
      files.allocations.map(reservationOf).filter((r) => r !== null),
    );
    // One list here, the second just before each DEL (applyOne): that one confirms.
    const judgement = judgeLeaks(attachments, first, 0, new Map(), { confirmAfterMs: 0, startGraceMs: 0, minAgeMs: minAge.value });
    const plan: GcPlanItem[] = gcPlanOf(judgement, (a) => {
      const e = a.cachePath === null ? undefined : byPath.get(a.cachePath);
      if (!e) return 'its cache entry could not be read';
      const p = delPlanOf(e);
      return p.ok ? null : p.why;
    });
    const outcomes = new Map<string, GcOutcome>();
    let runtimeLost = false;
    if (values.apply) {
      // Its caller, as the daemon records the DELs: this process, named as cnirec.
      process.title = 'cnirec';
      let stopped: string | null = null;
      for (const item of plan) {
        if (stopped !== null) {
          outcomes.set(item.key, { result: 'not-run', why: stopped });
          continue;
        }
        if (!item.freeable) {
          outcomes.set(item.key, { result: 'not-run', why: item.why ?? 'not freeable' });
          continue;
        }
        const wait = first.atMs + RECHECK_GAP_MS - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        try {
          outcomes.set(item.key, await applyOne(item, { client: asked, binDirs, hostLocalDirs }));
        } catch (err) {
          runtimeLost = true;
          stopped = `the runtime stopped answering (${err instanceof CriCallError ? err.problem.message : String(err)}): nothing more was run`;
          outcomes.set(item.key, { result: 'not-run', why: stopped });
        }
      }
    }
    const items = plan.map((i) => ({ ...presentGcPlanItem(i), ...(outcomes.has(i.key) ? { outcome: outcomes.get(i.key)! } : {}) }));
    const count = (v: string) => judgement.verdicts.filter((x) => x.verdict === v).length;
    const problems = files.problems.map((p) => p.message);
    if (values.json) {
      stdout.raw(`${JSON.stringify({ runtime, sandboxes: first.ids.size, binDirs, applied: values.apply === true, items, notJudged: { tooYoung: count('too-young'), notRuntime: count('not-runtime') }, problems }, null, 2)}\n`);
    } else {
      stdout.lines(formatGc({ runtime, sandboxes: first.ids.size, items, applied: values.apply === true, tooYoung: count('too-young'), notRuntime: count('not-runtime'), minAge: minAgeText, problems }, Date.now()));
    }
    return runtimeLost || [...outcomes.values()].some((o) => o.result === 'failed') ? 1 : 0;
  } finally {
    asked.close();
  }
}

/**
 * The container runtime in a bundle, as it was when the bundle was taken.
 * When the daemon answered, its view (GET /api/v1/node/runtime) and its GC
 * plan go in daemon/runtime.json and daemon/gc-plan.json (make-bundle.ts);
 * when none did, `cnirec bundle` asks the runtime itself through the
 * collector's read-only CRI client (Version, Status, ListPodSandbox, a short
 * deadline each) and keeps the answer in node/runtime.json, or why it could
 * not. Either names the runtime and its CRI version in node/versions.json and
 * fills the doctor's runtime section; crictl is asked only when neither did.
 */

import { z } from 'zod';
import { doctorRuntimeFromAnswer, doctorRuntimeFromDaemon, runtimeStatusSchema, type DoctorRuntime, type RuntimeStatusBody } from '../api/index.js';
import { RUNTIME_PROBLEM_KINDS, type RuntimeAnswer } from '../collector/index.js';
import { isoFromMs } from '../lib/index.js';

export const ASKED_RUNTIME_FILE = 'node/runtime.json';
export const DAEMON_RUNTIME_FILE = 'daemon/runtime.json';
export const DAEMON_GC_PLAN_FILE = 'daemon/gc-plan.json';

/** Each CRI call of `cnirec bundle`'s own asking: as `cnirec doctor`'s, a bundle must not wait on a runtime that hangs. */
export const BUNDLE_CRI_TIMEOUT_MS = 3_000;

const iso = z.string();

/** node/runtime.json: the runtime asked by `cnirec bundle` itself (no daemon answered). */
export const askedRuntimeSchema = z.object({
  askedAt: iso,
  endpoint: z.string().nullable(),
  reachable: z.boolean(),
  name: z.string().nullable(),
  version: z.string().nullable(),
  apiVersion: z.string().nullable(),
  conditions: z.array(z.object({ type: z.string(), status: z.boolean(), reason: z.string(), message: z.string() })),
  /** ListPodSandbox (no addresses: it has none), labels and annotations redacted; null when not answered. */
  sandboxes: z
    .array(
      z.object({
        id: z.string(),
        namespace: z.string(),
        name: z.string(),
        uid: z.string(),
        attempt: z.number().int(),
        state: z.enum(['ready', 'notready']),
        createdAt: iso,
        labels: z.record(z.string(), z.string()),
        annotations: z.record(z.string(), z.string()),
        runtimeHandler: z.string(),
      }),
    )
    .nullable(),
  error: z.string().nullable(),
  errorKind: z.enum(RUNTIME_PROBLEM_KINDS).nullable(),
});
export type AskedRuntime = z.infer<typeof askedRuntimeSchema>;

/** The daemon's view as a bundle keeps it (`recorded` is what an opened bundle adds, so it is not read back). */
export const daemonRuntimeSchema = runtimeStatusSchema.omit({ recorded: true });
export type DaemonRuntimeView = z.infer<typeof daemonRuntimeSchema>;

/** Who said how the runtime was when the bundle was taken. */
export type RuntimeAtBundle = { readonly from: 'daemon'; readonly view: DaemonRuntimeView } | { readonly from: 'runtime'; readonly answer: AskedRuntime };

export function askedRuntimeFile(a: RuntimeAnswer): AskedRuntime {
  return {
    askedAt: isoFromMs(a.atMs),
    endpoint: a.endpoint,
    reachable: a.reachable,
    name: a.version?.name ?? null,
    version: a.version?.version ?? null,
    apiVersion: a.version?.apiVersion ?? null,
    conditions: a.conditions.map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message })),
    sandboxes:
      a.sandboxes?.map((s) => ({
        id: s.id,
        namespace: s.namespace,
        name: s.name,
        uid: s.uid,
        attempt: s.attempt,
        state: s.state,
        createdAt: isoFromMs(s.createdAtMs),
        labels: { ...s.labels },
        annotations: { ...s.annotations },
        runtimeHandler: s.runtimeHandler,
      })) ?? null,
    error: a.problem?.message ?? null,
    errorKind: a.problem?.kind ?? null,
  };
}

/** The daemon's GET /api/v1/node/runtime answer, when it is one (an older daemon's or a 501 is not). */
export function daemonRuntimeOf(json: unknown): DaemonRuntimeView | null {
  const r = daemonRuntimeSchema.safeParse(json);
  return r.success ? r.data : null;
}

/** The runtime and the CRI it speaks, as node/versions.json names them; null when nothing answered for it. */
export function criVersionOf(r: RuntimeAtBundle | null): { from: 'daemon' | 'runtime'; endpoint: string | null; name: string; version: string; apiVersion: string | null } | null {
  const v = r === null ? null : r.from === 'daemon' ? r.view : r.answer;
  if (v === null || v.name === null || v.version === null) return null;
  return { from: r!.from, endpoint: v.endpoint, name: v.name, version: v.version, apiVersion: v.apiVersion };
}

/** The doctor's runtime section (as `cnirec doctor --json` prints it); null when the runtime's side is off or nothing was asked. */
export function doctorRuntimeOf(r: RuntimeAtBundle | null, looked: boolean): DoctorRuntime | null {
  if (r === null) return null;
  if (r.from === 'daemon') return r.view.errorKind === 'off' ? null : doctorRuntimeFromDaemon({ ...r.view, recorded: null } satisfies RuntimeStatusBody, looked);
  const a = r.answer;
  return doctorRuntimeFromAnswer(
    {
      atMs: Date.parse(a.askedAt),
      endpoint: a.endpoint,
      reachable: a.reachable,
      version: a.name !== null && a.version !== null ? { name: a.name, version: a.version, apiVersion: a.apiVersion ?? '' } : null,
      conditions: a.conditions,
      sandboxes: null,
      problem: a.errorKind !== null ? { kind: a.errorKind, message: a.error ?? '' } : null,
    },
    looked,
  );
}

/** What the manifest says of the runtime when the bundle asked it itself. */
export function askedRuntimeNotes(a: AskedRuntime): string[] {
  if (a.errorKind === 'off') return ['The container runtime was not asked (--cri-endpoint none).'];
  if (!a.reachable) return [`The container runtime could not be asked: ${a.error ?? 'no answer'}`];
  const sandboxes = a.sandboxes === null ? 'its sandboxes could not be listed' : `${a.sandboxes.length} sandbox${a.sandboxes.length === 1 ? '' : 'es'} listed`;
  return [`No daemon answered: the container runtime (${a.name} ${a.version} at ${a.endpoint}) was asked directly, ${sandboxes} (${ASKED_RUNTIME_FILE}).`];
}

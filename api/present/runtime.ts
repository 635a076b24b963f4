/** The store's runtime view, gc plan and sandboxes → the contract's shapes (api/schemas/runtime.ts). */

import type { GcPlanItem } from '../../collector/index.js';
import { isoFromMs } from '../../lib/index.js';
import type { GcPlan, RecordedOrigin, RuntimeView, StoredSandbox } from '../../store/index.js';
import type { GcPlanBody, GcPlanItemBody, RecordedBody, RuntimeStatusBody, SandboxRuntime } from '../schemas/runtime.js';

const iso = (ms: number | null): string | null => (ms === null ? null : isoFromMs(ms));

const RECORDED_NOTES: Readonly<Record<RecordedOrigin['from'], (node: string, at: string) => string>> = {
  daemon: (node, at) => `As the daemon on node ${node} saw the container runtime when the bundle was taken (${at}): recorded, not live.`,
  runtime: (node, at) => `As \`cnirec bundle\` found the container runtime on node ${node} when the bundle was taken (${at}; the daemon was down): recorded, not live.`,
  record: (node, at) => `As the record of node ${node} last had it (nothing asked the container runtime when the bundle was taken, ${at}): recorded, not live.`,
};

export function presentRecorded(r: RecordedOrigin | undefined, what: 'runtime' | 'gc-plan' = 'runtime'): RecordedBody {
  if (!r) return null;
  const at = isoFromMs(r.atMs);
  const note =
    what === 'gc-plan'
      ? `The GC plan as the daemon on node ${r.node} judged it when the bundle was taken (${at}): recorded, not live; \`cnirec gc\` on the node lists what a GC would free now.`
      : RECORDED_NOTES[r.from](r.node, at);
  return { takenAt: at, node: r.node, from: r.from, note };
}

export function presentRuntime(v: RuntimeView): RuntimeStatusBody {
  return {
    endpoint: v.endpoint,
    reachable: v.reachable,
    name: v.version?.name ?? null,
    version: v.version?.version ?? null,
    apiVersion: v.version?.apiVersion ?? null,
    conditions: v.conditions.map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message, since: isoFromMs(c.sinceMs) })),
    transitions: v.transitions.map((t) => ({ at: isoFromMs(t.atMs), endpoint: t.endpoint, type: t.type, status: t.status, reason: t.reason, message: t.message })),
    lastCheckedAt: iso(v.lastCheckedAtMs),
    answeringSince: iso(v.answeringSinceMs),
    error: v.problem?.message ?? null,
    errorKind: v.problem?.kind ?? null,
    leaks: { judging: v.leaks.judging, why: v.leaks.why, confirmed: v.leaks.confirmed, suspected: v.leaks.suspected, lastJudgedAt: iso(v.leaks.lastJudgedAtMs) },
    recorded: presentRecorded(v.recorded),
  };
}

export function presentGcPlanItem(i: GcPlanItem): GcPlanItemBody {
  return {
    containerId: i.containerId,
    network: i.network,
    ifName: i.ifName,
    addresses: [...i.addresses],
    pod: i.pod ? { namespace: i.pod.namespace, name: i.pod.name } : null,
    netns: i.netns,
    cachePath: i.cachePath,
    reservationPaths: [...i.reservationPaths],
    attachedAt: isoFromMs(i.attachedAtMs),
    missingSince: isoFromMs(i.missingSinceMs),
    freeable: i.freeable,
    why: i.why,
  };
}

export function presentGcPlan(p: GcPlan): GcPlanBody {
  return {
    endpoint: p.endpoint,
    reachable: p.reachable,
    judging: p.judging,
    why: p.why,
    judgedAt: iso(p.judgedAtMs),
    suspected: p.suspected,
    items: p.items.map(presentGcPlanItem),
    recorded: presentRecorded(p.recorded, 'gc-plan'),
  };
}

export function presentSandboxRuntime(s: StoredSandbox): SandboxRuntime {
  return {
    state: s.state,
    createdAt: isoFromMs(s.createdAtMs),
    ip: s.ip,
    additionalIps: [...s.additionalIps],
    uid: s.uid,
    attempt: s.attempt,
    runtimeHandler: s.runtimeHandler,
    labels: { ...s.labels },
    annotations: { ...s.annotations },
    seenAt: isoFromMs(s.seenAtMs),
    goneAt: iso(s.goneAtMs),
  };
}

/** The store's runtime view, gc plan and sandboxes → the contract's shapes (api/schemas/runtime.ts). */

import type { GcPlanItem } from '../../collector/index.js';
import { isoFromMs } from '../../lib/index.js';
import type { GcPlan, RuntimeView, StoredSandbox } from '../../store/index.js';
import type { GcPlanBody, GcPlanItemBody, RuntimeStatusBody, SandboxRuntime } from '../schemas/runtime.js';

const iso = (ms: number | null): string | null => (ms === null ? null : isoFromMs(ms));

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

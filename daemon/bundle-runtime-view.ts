/**
 * An opened bundle's runtime side, pure: the record's view (its transitions,
 * the conditions as last recorded, its sandboxes: store/runtime's record
 * reader) with how the runtime was when the bundle was taken laid over it —
 * the daemon's own view (endpoint, whether it answered, version, why not,
 * leaks as judged then), or the runtime asked by `cnirec bundle` itself (its
 * conditions folded in by the same readiness rule the tracker runs) — and
 * marked recorded: an opened bundle never says anything of the machine that
 * serves it. The gc plan is the daemon's as it judged it then, or none.
 */

import { attachmentKey, type GcPlanItem } from '../collector/index.js';
import { readinessStep, RECENT_RUNTIME_TRANSITIONS, type ConditionState, type GcPlan, type RecordedOrigin, type RuntimeView, type StoredSandbox } from '../store/index.js';
import type { AskedRuntime, DaemonRuntimeView, RuntimeAtBundle } from './bundle-runtime.js';
import type { z } from 'zod';
import type { gcPlanSchema } from '../api/index.js';

export type RecordedGcPlan = Omit<z.infer<typeof gcPlanSchema>, 'recorded'>;

const ms = (iso: string | null): number | null => (iso === null ? null : Date.parse(iso));

/** The bundle's node and time: every view read back carries it, and from what it was said. */
export type BundleOrigin = Omit<RecordedOrigin, 'from'>;

export function recordedRuntimeView(record: RuntimeView, said: RuntimeAtBundle | null, origin: BundleOrigin): RuntimeView {
  if (said === null) return { ...record, recorded: { ...origin, from: 'record' } };
  if (said.from === 'daemon') return overDaemon(record, said.view, origin);
  return overAsked(record, said.answer, origin);
}

function overDaemon(record: RuntimeView, v: DaemonRuntimeView, origin: BundleOrigin): RuntimeView {
  return {
    ...record,
    endpoint: v.endpoint,
    reachable: v.reachable,
    version: v.name !== null && v.version !== null ? { name: v.name, version: v.version, apiVersion: v.apiVersion ?? '' } : null,
    // The record's (its window's); the daemon's when the record holds none (a write it could not make).
    conditions: record.conditions.length > 0 ? record.conditions : v.conditions.map((c) => ({ ...c, sinceMs: Date.parse(c.since) })),
    lastCheckedAtMs: ms(v.lastCheckedAt),
    answeringSinceMs: ms(v.answeringSince),
    problem: v.errorKind === null ? null : { kind: v.errorKind, message: v.error ?? '' },
    leaks: { judging: v.leaks.judging, why: v.leaks.why, confirmed: v.leaks.confirmed, suspected: v.leaks.suspected, lastJudgedAtMs: ms(v.leaks.lastJudgedAt) },
    recorded: { ...origin, from: 'daemon' },
  };
}

/** The runtime's answer to the bundle, as one more poll after the record's last. */
function overAsked(record: RuntimeView, a: AskedRuntime, origin: BundleOrigin): RuntimeView {
  const atMs = Date.parse(a.askedAt);
  const version = a.name !== null && a.version !== null ? { name: a.name, version: a.version, apiVersion: a.apiVersion ?? '' } : null;
  const problem = a.errorKind === null ? null : { kind: a.errorKind, message: a.error ?? '' };
  // A Reachable transition stands behind answeringSince (true) or the problem (false); none: never answered.
  const knownReachable = record.answeringSinceMs !== null ? true : record.problem !== null ? false : null;
  const known = new Map<string, ConditionState>(record.conditions.map((c) => [c.type, c]));
  const step = readinessStep(known, knownReachable, {
    atMs,
    endpoint: a.endpoint,
    reachable: a.reachable,
    version,
    conditions: a.reachable ? a.conditions : null,
    sandboxes: null,
    listedAtMs: null,
    problem,
    answeringSinceMs: null,
  });
  const added = step.transitions.map((t) => ({ ...t, id: 0 })).reverse();
  return {
    ...record,
    endpoint: a.endpoint ?? record.endpoint,
    reachable: a.reachable,
    version,
    conditions: [...step.conditions.values()],
    transitions: [...added, ...record.transitions].slice(0, RECENT_RUNTIME_TRANSITIONS),
    lastCheckedAtMs: atMs,
    answeringSinceMs: a.reachable ? (knownReachable === true ? record.answeringSinceMs : atMs) : null,
    problem,
    leaks: { ...record.leaks, why: 'no daemon answered when the bundle was taken: only a running daemon judges leaks (the record keeps those it confirmed)' },
    recorded: { ...origin, from: 'runtime' },
  };
}

/**
 * A sandbox the record still has listed, as last seen when the bundle was taken: the record rewrites a row only
 * when the runtime reports it differently, so its seenAt is when it last changed; the daemon's last poll (or the
 * bundle's own list) saw it later.
 */
export function seenAtBundle(said: RuntimeAtBundle | null): (s: StoredSandbox) => StoredSandbox {
  if (said === null) return (s) => s;
  if (said.from === 'daemon') {
    const at = said.view.reachable ? ms(said.view.lastCheckedAt) : null;
    return (s) => (s.goneAtMs === null && at !== null && at > s.seenAtMs ? { ...s, seenAtMs: at } : s);
  }
  const listed = new Set(said.answer.sandboxes?.map((x) => x.id) ?? []);
  const at = Date.parse(said.answer.askedAt);
  return (s) => (s.goneAtMs === null && listed.has(s.id) && at > s.seenAtMs ? { ...s, seenAtMs: at } : s);
}

/** The daemon's GC plan body back as the store's shape (the inverse of api/present's presentGcPlan). */
export function gcPlanFromBody(b: RecordedGcPlan, origin: BundleOrigin): GcPlan {
  return {
    endpoint: b.endpoint,
    reachable: b.reachable,
    judging: b.judging,
    why: b.why,
    judgedAtMs: ms(b.judgedAt),
    suspected: b.suspected,
    items: b.items.map(
      (i): GcPlanItem => ({
        key: attachmentKey(i.containerId, i.network, i.ifName),
        containerId: i.containerId,
        network: i.network,
        ifName: i.ifName,
        addresses: i.addresses,
        pod: i.pod,
        netns: i.netns,
        cachePath: i.cachePath,
        reservationPaths: i.reservationPaths,
        attachedAtMs: Date.parse(i.attachedAt),
        missingSinceMs: Date.parse(i.missingSince),
        freeable: i.freeable,
        why: i.why,
      }),
    ),
    recorded: { ...origin, from: 'daemon' },
  };
}

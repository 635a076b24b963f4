/**
 * The store's side of the runtime: each poll's snapshot (collector/runtime)
 * becomes the readiness timeline (a row per change, none per poll), the
 * `network-not-ready` finding while the runtime says NetworkReady=false, the
 * sandboxes it listed (kept after they go), and the `leaked-attachment`
 * findings for the attachments whose sandbox it no longer lists (the rules:
 * collector/runtime/leak-rules.ts). A change of readiness is published for
 * the tail and the log.
 *
 * The database's failures never reach the poller: they go to `onError`, and
 * the view goes on in memory.
 */

import type { Database } from 'better-sqlite3';
import { gcPlanOf, judgeLeaks, type LeakJudgement, type LeakTiming, type RuntimeSandbox, type RuntimeSnapshot, type RuntimeSnapshotListener } from '../../collector/index.js';
import { createGuard, createTopic } from '../../lib/index.js';
import { createFindingsLog } from '../findings/index.js';
import { createLeakSources, type StoredAttachment } from './leak-sources.js';
import { readinessStep } from './readiness-rules.js';
import { createRuntimeLog } from './runtime-log.js';
import { RECENT_RUNTIME_TRANSITIONS } from './runtime-record.js';
import { leakedAttachmentMessage, NETWORK_NOT_READY_SUBJECT, networkNotReadyMessage, runtimeName } from './runtime-text.js';
import type { ConditionState, GcPlan, RuntimeReadinessListener, RuntimeTransition, RuntimeView, StoredSandbox } from './types.js';


export interface RuntimeTrackerOptions {
  readonly timing: LeakTiming;
  readonly onError: (err: unknown) => void;
  /** False until the cache watcher has read its directories once: before that the attachments are not known. */
  readonly cacheReady?: () => boolean;
}

export interface RuntimeTracker extends RuntimeSnapshotListener {
  view(): RuntimeView;
  subscribe(listener: RuntimeReadinessListener): () => void;
  /** The sandboxes of these ids the runtime ever listed, as last reported (a listed one seen at the last poll). */
  sandboxes(ids: readonly string[]): Map<string, StoredSandbox>;
  sandboxesOfPod(namespace: string, name: string): StoredSandbox[];
  gcPlan(): GcPlan;
  /** Whether the runtime judges this container's attachments (then today's guess, `leaked-ip`, gives way to it). */
  judges(containerId: string | null): boolean;
  /** Open leaked-attachment findings by network. */
  leakedByNetwork(): Map<string | null, number>;
}

const sameSandbox = (a: RuntimeSandbox, b: RuntimeSandbox): boolean =>
  a.state === b.state &&
  a.ip === b.ip &&
  a.uid === b.uid &&
  a.attempt === b.attempt &&
  a.createdAtMs === b.createdAtMs &&
  JSON.stringify([a.additionalIps, a.labels, a.annotations]) === JSON.stringify([b.additionalIps, b.labels, b.annotations]);

export function createRuntimeTracker(db: Database, opts: RuntimeTrackerOptions): RuntimeTracker {
  const guard = createGuard(opts.onError);
  const log = createRuntimeLog(db);
  const findings = createFindingsLog(db);
  const sources = createLeakSources(db);
  const topic = createTopic<RuntimeReadinessListener>(opts.onError);

  const known = guard(() => log.lastKnown(), { conditions: new Map<string, ConditionState>(), reachable: null as boolean | null });
  let conditions: ReadonlyMap<string, ConditionState> = known.conditions;
  let reachable: boolean | null = known.reachable;
  let recent: RuntimeTransition[] = guard(() => log.transitions(RECENT_RUNTIME_TRANSITIONS), []);
  let latest: RuntimeSnapshot | null = null;
  const live = new Map<string, StoredSandbox>(guard(() => log.liveSandboxes(), []).map((s) => [s.id, s]));
  let suspects: ReadonlyMap<string, number> = new Map();
  let judgement: LeakJudgement = { judging: false, why: 'the runtime has not been asked yet', verdicts: [], suspects: new Map() };
  let judgedAtMs: number | null = null;
  let attachments: StoredAttachment[] = [];
  let judged = new Set<string>();

  const view = (): RuntimeView => ({
    endpoint: latest?.endpoint ?? null,
    reachable: latest?.reachable ?? false,
    version: latest?.version ?? null,
    conditions: [...conditions.values()],
    transitions: recent,
    lastCheckedAtMs: latest?.atMs ?? null,
    problem: latest?.problem ?? null,
    answeringSinceMs: latest?.answeringSinceMs ?? null,
    leaks: {
      judging: judgement.judging,
      why: judgement.why,
      confirmed: judgement.verdicts.filter((v) => v.verdict === 'leaked').length,
      suspected: judgement.verdicts.filter((v) => v.verdict === 'suspect').length,
      lastJudgedAtMs: judgedAtMs,
    },
  });

  const readiness = (s: RuntimeSnapshot) => {
    const step = readinessStep(conditions, reachable, s);
    conditions = step.conditions;
    const changed = step.transitions.length > 0;
    if (s.problem?.kind !== 'off' && (reachable !== null || s.reachable)) reachable = step.reachable;
    if (changed) {
      const saved = guard(() => log.addTransitions(step.transitions), step.transitions.map((t) => ({ ...t, id: 0 })));
      recent = [...saved.reverse(), ...recent].slice(0, RECENT_RUNTIME_TRANSITIONS);
    }
    if (s.reachable) {
      const net = conditions.get('NetworkReady');
      guard(() => {
        if (net && !net.status) {
          const who = runtimeName(s.version, s.endpoint);
          const change = log.confChangeBefore(net.sinceMs);
          findings.open('network-not-ready', NETWORK_NOT_READY_SUBJECT, { message: networkNotReadyMessage(net, who, change), path: change?.path ?? null }, s.atMs);
        } else if (net) findings.resolve('network-not-ready', NETWORK_NOT_READY_SUBJECT, s.atMs);
      }, undefined);
    }
    return changed;
  };

  /** Sandboxes listed are kept as listed; one no longer listed is marked gone, once the list can be trusted. */
  const sandboxes = (s: RuntimeSnapshot, trusted: boolean) => {
    if (s.sandboxes === null || s.listedAtMs === null) return;
    const at = s.listedAtMs;
    const listed = new Set<string>();
    for (const sb of s.sandboxes) {
      listed.add(sb.id);
      const before = live.get(sb.id);
      if (!before || !sameSandbox(before, sb)) guard(() => log.saveSandbox(sb, before?.firstSeenMs ?? at, at), undefined);
      live.set(sb.id, { ...sb, firstSeenMs: before?.firstSeenMs ?? at, seenAtMs: at, goneAtMs: null });
    }
    if (!trusted) return;
    for (const [id, sb] of live) {
      if (listed.has(id)) continue;
      guard(() => log.markGone(id, sb.seenAtMs, at), undefined);
      live.delete(id);
    }
  };

  const leaks = (s: RuntimeSnapshot) => {
    const cacheReady = opts.cacheReady?.() ?? true;
    if (cacheReady) attachments = guard(() => sources.attachments(), attachments);
    const list = s.sandboxes !== null && s.listedAtMs !== null ? { atMs: s.listedAtMs, ids: new Set(s.sandboxes.map((x) => x.id)) } : null;
    judgement = cacheReady
      ? judgeLeaks(attachments, list, s.answeringSinceMs, suspects, opts.timing)
      : { judging: false, why: "the CNI cache directories have not been read yet", verdicts: [], suspects: new Map() };
    suspects = judgement.suspects;
    if (judgement.judging) judgedAtMs = s.atMs;
    judged = new Set(s.reachable ? attachments.filter((a) => a.pod !== null).map((a) => a.containerId) : []);
    if (!cacheReady) return;
    const who = runtimeName(s.version, s.endpoint);
    const verdicts = new Map(judgement.verdicts.map((v) => [v.attachment.key, v]));
    const present = new Set(attachments.map((a) => a.key));
    guard(() => {
      for (const v of judgement.verdicts) {
        if (v.verdict !== 'leaked') continue;
        const a = v.attachment;
        findings.open(
          'leaked-attachment',
          a.key,
          {
            message: leakedAttachmentMessage(a, v.missingSinceMs ?? s.atMs, who),
            path: a.cachePath ?? a.reservationPaths[0] ?? null,
            containerId: a.containerId,
            network: a.network,
            ip: a.addresses[0] ?? null,
            podNamespace: a.pod?.namespace ?? null,
            podName: a.pod?.name ?? null,
          },
          s.atMs,
        );
      }
      // Resolved when the cache entry and the reservations are gone, or when the runtime lists its sandbox after all.
      for (const subject of findings.openSubjects('leaked-attachment')) {
        if (!present.has(subject) || verdicts.get(subject)?.verdict === 'live') findings.resolve('leaked-attachment', subject, s.atMs);
      }
    }, undefined);
  };

  return {
    onRuntimeSnapshot(s) {
      latest = s;
      const changed = readiness(s);
      const trusted = s.answeringSinceMs !== null && s.listedAtMs !== null && s.listedAtMs - s.answeringSinceMs >= opts.timing.startGraceMs;
      sandboxes(s, trusted);
      leaks(s);
      if (changed) {
        const v = view();
        topic.publish((l) => l.onRuntimeReadiness({ type: 'change', view: v }));
      }
    },
    view,
    subscribe: (l) => topic.subscribe(l),
    sandboxes(ids) {
      const out = guard(() => log.sandboxesByIds(ids), new Map<string, StoredSandbox>());
      for (const id of ids) {
        const l = live.get(id);
        if (l) out.set(id, l);
      }
      return out;
    },
    sandboxesOfPod(namespace, name) {
      return guard(() => log.sandboxesOfPod(namespace, name), []).map((s) => live.get(s.id) ?? s);
    },
    gcPlan() {
      const byKey = new Map(attachments.map((a) => [a.key, a]));
      const items = judgement.judging ? gcPlanOf(judgement, (a) => (byKey.get(a.key)?.hasConfig ? null : 'its cache entry holds no config libcni could DEL with')) : [];
      return {
        endpoint: latest?.endpoint ?? null,
        reachable: latest?.reachable ?? false,
        judging: judgement.judging,
        why: judgement.why,
        items,
        suspected: judgement.verdicts.filter((v) => v.verdict === 'suspect').length,
        judgedAtMs,
      };
    },
    judges: (containerId) => containerId !== null && judged.has(containerId),
    leakedByNetwork: () => guard(() => log.openLeaksByNetwork(), new Map<string | null, number>()),
  };
}

/**
 * The runtime's side as a record holds it, read-only, with no runtime to ask:
 * the conditions as their latest transitions left them, whether the runtime
 * answered last and why not (the `Reachable` transition's reason and
 * message), the newest transitions, the sandboxes and the open leaks. An
 * opened bundle answers from it (daemon/bundle-runtime.ts); the live tracker
 * reads the same tables through the same log.
 */

import type { Database } from 'better-sqlite3';
import { RUNTIME_PROBLEM_KINDS, type RuntimeProblemKind } from '../../collector/index.js';
import { createRuntimeLog } from './runtime-log.js';
import { REACHABLE, type RuntimeView, type StoredSandbox } from './types.js';

/** Transitions a view carries (the API's `transitions`). */
export const RECENT_RUNTIME_TRANSITIONS = 50;

export interface RuntimeRecord {
  /**
   * What the record alone says: no poll stands behind it, so `version` and `lastCheckedAtMs` are null and no
   * leak is being judged (`leaks.confirmed` counts the open leaked-attachment findings it holds).
   */
  view(): RuntimeView;
  sandboxes(ids: readonly string[]): Map<string, StoredSandbox>;
  sandboxesOfPod(namespace: string, name: string): StoredSandbox[];
  leakedByNetwork(): Map<string | null, number>;
}

const problemKind = (reason: string): RuntimeProblemKind => ((RUNTIME_PROBLEM_KINDS as readonly string[]).includes(reason) ? (reason as RuntimeProblemKind) : 'error');

export function createRuntimeRecord(db: Database): RuntimeRecord {
  const log = createRuntimeLog(db);
  return {
    view() {
      const latest = log.latestPerType();
      const reach = latest.find((t) => t.type === REACHABLE) ?? null;
      const transitions = log.transitions(RECENT_RUNTIME_TRANSITIONS);
      const confirmed = [...log.openLeaksByNetwork().values()].reduce((a, b) => a + b, 0);
      return {
        endpoint: transitions[0]?.endpoint ?? null,
        reachable: reach?.status ?? false,
        version: null,
        conditions: latest.filter((t) => t.type !== REACHABLE).map((t) => ({ type: t.type, status: t.status, reason: t.reason, message: t.message, sinceMs: t.atMs })),
        transitions,
        lastCheckedAtMs: null,
        problem: reach && !reach.status ? { kind: problemKind(reach.reason), message: reach.message } : null,
        answeringSinceMs: reach?.status ? reach.atMs : null,
        leaks: { judging: false, why: 'only a daemon asking the runtime judges leaks; the record keeps the ones it confirmed', confirmed, suspected: 0, lastJudgedAtMs: null },
      };
    },
    sandboxes: (ids) => log.sandboxesByIds(ids),
    sandboxesOfPod: (namespace, name) => log.sandboxesOfPod(namespace, name),
    leakedByNetwork: () => log.openLeaksByNetwork(),
  };
}

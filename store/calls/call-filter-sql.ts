/**
 * CallFilter → SQL conditions and their bound values. Every value a client
 * supplies is a `?` parameter; the only literals are fixed fragments picked
 * by a boolean or an enum value, kept literal on purpose: SQLite uses a
 * partial index (`WHERE ok = 0`, `WHERE status = 'running'`) only when the
 * query states the same condition with the same constant, not a parameter.
 */

import type { CallStatus } from '../../collector/index.js';
import type { SqlValue } from './call-rows.js';
import type { CallFilter } from './types.js';

export interface SqlConditions {
  readonly conditions: string[];
  readonly params: SqlValue[];
}

const STATUS_CONDITION: Readonly<Record<CallStatus, string>> = {
  running: "status = 'running'",
  finished: "status = 'finished'",
  incomplete: "status = 'incomplete'",
};

const EQUALS: ReadonlyArray<readonly [keyof CallFilter, string]> = [
  ['namespace', 'pod_namespace'],
  ['pod', 'pod_name'],
  ['podUid', 'pod_uid'],
  ['containerId', 'container_id'],
  ['command', 'command'],
  ['plugin', 'plugin'],
  ['parentId', 'parent_id'],
  ['network', 'network'],
];

export function callFilterConditions(filter: CallFilter): SqlConditions {
  const conditions: string[] = [];
  const params: SqlValue[] = [];
  for (const [key, column] of EQUALS) {
    const value = filter[key];
    if (value === undefined || value === null) continue;
    conditions.push(`${column} = ?`);
    params.push(String(value));
  }
  if (filter.failed !== undefined && filter.failed !== null) conditions.push(filter.failed ? 'ok = 0' : 'ok = 1');
  if (filter.minDurationUs != null) {
    conditions.push('duration_us >= ?');
    params.push(filter.minDurationUs);
  }
  if (filter.sinceUs != null) {
    conditions.push('started_at_us >= ?');
    params.push(filter.sinceUs);
  }
  if (filter.untilUs != null) {
    conditions.push('started_at_us < ?');
    params.push(filter.untilUs);
  }
  if (filter.status != null) {
    const fixed = Object.hasOwn(STATUS_CONDITION, filter.status) ? STATUS_CONDITION[filter.status] : undefined;
    if (fixed !== undefined) conditions.push(fixed);
    else {
      // Not a status we know: still a parameter, so it simply matches nothing.
      conditions.push('status = ?');
      params.push(String(filter.status));
    }
  }
  // Runtimes probe every plugin with VERSION all the time; asking for that
  // command by name is the one way to see them without includeVersion.
  if (filter.includeVersion !== true && filter.command !== 'VERSION') conditions.push('is_version_probe = 0');
  // The same for STATUS heartbeats: the healthy ones kept (a network's first answer, the first after a
  // change, a slow one) belong to the readiness timeline; a failing STATUS is listed.
  if (filter.command !== 'STATUS') conditions.push("(command IS NOT 'STATUS' OR ok IS NOT 1)");
  return { conditions, params };
}

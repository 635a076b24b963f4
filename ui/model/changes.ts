/** A call's kernel changes for its page: grouped by netns, the netns with a refusal first and refusals at its top. Pure. */

import type { CallDetail } from '../client/types.js';

export type ChangeView = NonNullable<CallDetail['changes']>[number];

export interface NetnsChanges {
  readonly netns: string;
  readonly changes: readonly ChangeView[];
  readonly refused: number;
}

export function changesByNetns(changes: readonly ChangeView[]): NetnsChanges[] {
  const groups = new Map<string, ChangeView[]>();
  for (const c of changes) groups.set(c.netns, [...(groups.get(c.netns) ?? []), c]);
  return [...groups]
    .map(([netns, list]) => ({ netns, changes: [...list.filter((c) => c.ok === false), ...list.filter((c) => c.ok !== false)], refused: list.filter((c) => c.ok === false).length }))
    .sort((a, b) => Number(b.refused > 0) - Number(a.refused > 0));
}

export const ACTION_SIGN: Readonly<Record<ChangeView['action'], string>> = { add: '+', delete: '−', change: '~' };

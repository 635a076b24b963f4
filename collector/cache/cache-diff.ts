/**
 * What one look at a path means, given what was known of it before: the
 * events to publish and what to remember. Pure, so every transition (a good
 * file turning corrupt, a corrupt one repaired, a rewrite with the same
 * bytes) is unit-tested without a filesystem.
 */

import type { CacheEntry, CacheEvent, CacheProblem, IpAllocation } from './cache-types.js';

/** What the watcher remembers of a path between looks. */
export type Known =
  | { readonly kind: 'entry'; readonly key: string; readonly entry: CacheEntry }
  | { readonly kind: 'ip'; readonly key: string; readonly allocation: IpAllocation }
  | { readonly kind: 'problem'; readonly key: string | null; readonly problem: CacheProblem };

/** What the watcher saw now: a decoded file, a problem, or nothing at all. */
export type Observation =
  | { readonly kind: 'entry'; readonly key: string; readonly entry: CacheEntry }
  | { readonly kind: 'ip'; readonly key: string; readonly allocation: IpAllocation }
  | { readonly kind: 'problem'; readonly key: string | null; readonly problem: CacheProblem }
  | { readonly kind: 'gone'; readonly path: string; readonly dir: string };

export function diffObservation(prev: Known | undefined, now: Observation, atMs: number): { events: CacheEvent[]; next: Known | undefined } {
  const events: CacheEvent[] = [];
  // Leaving the previous state: a problem that is no longer there is cleared; a good file that is gone is removed.
  if (prev?.kind === 'problem' && !(now.kind === 'problem' && now.problem.kind === prev.problem.kind && now.problem.message === prev.problem.message)) {
    events.push({ type: 'cache.problem-cleared', path: prev.problem.path, atMs });
  }
  switch (now.kind) {
    case 'gone':
      if (prev?.kind === 'entry') events.push({ type: 'cache.removed', path: now.path, dir: now.dir, atMs });
      if (prev?.kind === 'ip') events.push({ type: 'ip.released', path: now.path, dir: now.dir, atMs });
      return { events, next: undefined };
    case 'problem':
      if (prev?.kind === 'problem' && events.length === 0) return { events, next: { ...now } };
      // A good entry turned bad keeps its last version in the store: the node still has that attachment,
      // libcni just cannot read its record any more, which is what the problem says.
      if (prev?.kind === 'ip') events.push({ type: 'ip.released', path: prev.allocation.path, dir: prev.allocation.dir, atMs });
      events.push({ type: 'cache.problem', problem: now.problem, atMs });
      return { events, next: { ...now } };
    case 'entry':
      if (prev?.kind === 'entry' && prev.entry.digest === now.entry.digest) return { events, next: { ...now } };
      events.push({ type: prev?.kind === 'entry' ? 'cache.changed' : 'cache.added', entry: now.entry, atMs });
      return { events, next: { ...now } };
    case 'ip':
      if (prev?.kind === 'ip' && prev.allocation.containerId === now.allocation.containerId && prev.allocation.ifName === now.allocation.ifName) {
        return { events, next: { ...now } };
      }
      events.push({ type: 'ip.allocated', allocation: now.allocation, atMs });
      return { events, next: { ...now } };
  }
}

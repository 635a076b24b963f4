/**
 * Which network a plugin type belongs to, from the node's live conf files
 * (store/node-setup's conf history): what names a call whose stdin was not
 * captured. Read again at most every few seconds, so a heartbeat costs no query.
 */

import type { Database } from 'better-sqlite3';

const REFRESH_MS = 5_000;
/** A type no conf lists is looked for again after this: a conf written a moment ago names its calls soon. */
const MISS_REFRESH_MS = 1_000;

interface LiveConf {
  readonly path: string;
  readonly network: string;
  readonly types: readonly string[];
}

/**
 * Plugin type → network. A type listed by several networks' confs goes to
 * the first file by path: the one a runtime loads first (libcni sorts a conf
 * dir's files by name, and containerd's default network is its first). Pure.
 */
export function networksByType(confs: readonly LiveConf[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const c of [...confs].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    for (const t of c.types) if (!out.has(t)) out.set(t, c.network);
  }
  return out;
}

export interface ConfNetworks {
  /** The network whose live conf lists `plugin` as a type (its own, its IPAM's, a delegate's); null when none does. */
  networkOfType(plugin: string, nowMs: number): string | null;
}

export function createConfNetworks(db: Database): ConfNetworks {
  const live = db.prepare<[], { path: string; network: string; types_json: string }>(
    'SELECT path, network, types_json FROM conf_versions WHERE superseded_at_ms IS NULL AND removed_at_ms IS NULL AND network IS NOT NULL AND parse_error IS NULL',
  );
  let map = new Map<string, string>();
  let readAtMs = -Infinity;
  return {
    networkOfType(plugin, nowMs) {
      const stale = nowMs - readAtMs >= (map.has(plugin) ? REFRESH_MS : MISS_REFRESH_MS) || nowMs < readAtMs;
      if (stale) {
        readAtMs = nowMs;
        map = networksByType(
          live.all().map((r) => {
            let types: string[] = [];
            try {
              types = JSON.parse(r.types_json) as string[];
            } catch {
              // unreadable: lists no type
            }
            return { path: r.path, network: r.network, types };
          }),
        );
      }
      return map.get(plugin) ?? null;
    },
  };
}

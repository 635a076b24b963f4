/**
 * GC-driven DELs. libcni's GC of a network first DELs every cached
 * attachment of the network missing from `cni.dev/valid-attachments`, then
 * runs GC on each plugin, all from the same runtime process. When a GC with
 * its stdin is recorded, the DELs of its network that its runtime process
 * ran just before it, for attachments not in its valid list, are marked
 * `gc_driven`: they were the GC's doing, not a pod's teardown.
 */

import type { Database } from 'better-sqlite3';
import type { CniCall } from '../../collector/index.js';
import { parseGcStdin } from '../node-setup/index.js';

/** How long before the GC its DELs may have started (each DEL is a whole plugin list's teardown). */
export const GC_DEL_WINDOW_MS = 60_000;

export const GC_DEL_SQL = `
  UPDATE calls SET gc_driven = 1
  WHERE network = @network AND started_at_us >= @fromUs AND started_at_us <= @gcUs
    AND command = 'DEL' AND parent_id IS NULL AND gc_driven = 0 AND parent_pid IS @parentPid
    AND container_id IS NOT NULL AND container_id != ''
    AND NOT EXISTS (SELECT 1 FROM json_each(@valid) v
      WHERE json_extract(v.value, '$.containerId') = calls.container_id
        AND (json_extract(v.value, '$.ifName') IS NULL OR calls.ifname IS NULL OR json_extract(v.value, '$.ifName') = calls.ifname))`;

export function createGcDelMarker(db: Database): { mark(gc: CniCall): number } {
  const update = db.prepare<{ network: string; fromUs: number; gcUs: number; parentPid: number | null; valid: string }>(GC_DEL_SQL);
  return {
    mark(gc) {
      if (gc.command !== 'GC' || gc.parentId !== null) return 0;
      const parsed = parseGcStdin(gc.stdin.bytes.length > 0 ? gc.stdin.bytes.toString('utf8') : null);
      // Without its stdin the valid attachments are unknown: nothing can be told apart.
      if (parsed === null) return 0;
      const network = parsed.network ?? gc.network ?? null;
      if (network === null) return 0;
      const gcUs = Math.floor(gc.startedAtUs);
      return update.run({ network, fromUs: gcUs - GC_DEL_WINDOW_MS * 1000, gcUs, parentPid: gc.parentProcess?.pid ?? null, valid: JSON.stringify(parsed.valid) }).changes;
    },
  };
}

/**
 * The `left-behind` finding: for each attachment (container, ifname)
 * whose successful ADD was followed by a successful DEL, both with
 * their changes captured, what the ADD created that the DEL did not remove
 * (left-behind-rules.ts) and that the kernel still has (the caller's port:
 * this module does no I/O of its own). Resolved once the kernel has none of
 * it any more.
 */

import type { Database } from 'better-sqlite3';
import type { KernelChange } from '../../collector/index.js';
import { createFindingsLog, type FindingFields } from './cache-findings.js';
import { leftBehindObjects, objectText, type KernelObjectRef } from './left-behind-rules.js';

/** Whether the kernel still has the object: true, false, or null when it cannot tell (then it is not raised). */
export type KernelObjectProbe = (o: KernelObjectRef) => boolean | null;

export interface LeftBehindCheck {
  detect(nowMs: number): void;
}

/** How far back DELs are looked at: what a DEL left an hour ago is still worth saying while it exists. */
const WINDOW_MS = 24 * 3600_000;

interface PairRow {
  add_id: string;
  del_id: string;
  container_id: string;
  ifname: string | null;
  plugin: string;
  add_changes: string;
  del_changes: string;
  pod_namespace: string | null;
  pod_name: string | null;
}

export function createLeftBehindCheck(db: Database, exists: KernelObjectProbe): LeftBehindCheck {
  const findings = createFindingsLog(db);
  // Each DEL with the latest ADD of its attachment before it; both succeeded and had their changes captured.
  const pairs = db.prepare<{ sinceUs: number }, PairRow>(`
    SELECT a.id AS add_id, d.id AS del_id, d.container_id, d.ifname, d.plugin, a.changes_json AS add_changes, d.changes_json AS del_changes,
           a.pod_namespace, a.pod_name
    FROM calls d JOIN calls a ON a.id = (
      SELECT x.id FROM calls x WHERE x.command = 'ADD' AND x.ok = 1 AND x.container_id = d.container_id AND x.ifname IS d.ifname
        AND x.parent_id IS NULL AND x.started_at_us < d.started_at_us ORDER BY x.started_at_us DESC LIMIT 1)
    WHERE d.command = 'DEL' AND d.ok = 1 AND d.parent_id IS NULL AND d.started_at_us >= @sinceUs
      AND a.changes_json != 'null' AND d.changes_json != 'null'`);

  const detect = (nowMs: number) => {
    const found = new Map<string, FindingFields>();
    for (const p of pairs.all({ sinceUs: (nowMs - WINDOW_MS) * 1000 })) {
      const left = leftBehindObjects(JSON.parse(p.add_changes) as KernelChange[], JSON.parse(p.del_changes) as KernelChange[]).filter((o) => exists(o) === true);
      if (left.length === 0) continue;
      found.set(`${p.container_id}/${p.ifname ?? ''}`, {
        message:
          `${p.plugin} DEL of container ${p.container_id} (${p.ifname ?? 'no ifname'}; call ${p.del_id}) left what its ADD (call ${p.add_id}) created, and the kernel still has it: ` +
          left.map(objectText).join('; '),
        containerId: p.container_id,
        callId: p.add_id,
        podNamespace: p.pod_namespace,
        podName: p.pod_name,
        count: left.length,
      });
    }
    db.transaction(() => {
      for (const [subject, fields] of found) findings.open('left-behind', subject, fields, nowMs);
      for (const subject of findings.openSubjects('left-behind')) if (!found.has(subject)) findings.resolve('left-behind', subject, nowMs);
    })();
  };
  return { detect };
}

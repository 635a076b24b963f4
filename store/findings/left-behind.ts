/**
 * The `left-behind` finding: for each attachment (container, ifname)
 * whose successful ADD was followed by a successful DEL, both with
 * their changes captured, what the ADD created that the DEL did not remove
 * (left-behind-rules.ts), that no later ADD of another attachment reused
 * (shared: not counted) and that the kernel still has (the caller's port:
 * this module does no I/O of its own). Resolved once the kernel has none of
 * it any more.
 */

import type { Database } from 'better-sqlite3';
import type { KernelChange } from '../../collector/index.js';
import { createFindingsLog, type FindingFields } from './cache-findings.js';
import { leftBehindObjects, objectText, sharedWithLaterAdds, type KernelObjectRef, type LaterAdd } from './left-behind-rules.js';

/** Whether the kernel still has the object: true, false, or null when it cannot tell (then it is not raised). */
export type KernelObjectProbe = (o: KernelObjectRef) => boolean | null;

export interface LeftBehindCheck {
  detect(nowMs: number): void;
}

/** How far back DELs are looked at: what a DEL left an hour ago is still worth saying while it exists. */
const WINDOW_MS = 24 * 3600_000;

interface PairRow {
  add_id: string;
  add_started_us: number;
  del_id: string;
  container_id: string;
  ifname: string | null;
  plugin: string;
  add_changes: string;
  del_changes: string;
  pod_namespace: string | null;
  pod_name: string | null;
}

interface LaterRow {
  id: string;
  container_id: string | null;
  ifname: string | null;
  started_at_us: number;
  changes_json: string;
}

export function createLeftBehindCheck(db: Database, exists: KernelObjectProbe): LeftBehindCheck {
  const findings = createFindingsLog(db);
  // Each DEL with the latest ADD of its attachment before it; both succeeded and had their changes captured.
  const pairs = db.prepare<{ sinceUs: number }, PairRow>(`
    SELECT a.id AS add_id, a.started_at_us AS add_started_us, d.id AS del_id, d.container_id, d.ifname, d.plugin, a.changes_json AS add_changes, d.changes_json AS del_changes,
           a.pod_namespace, a.pod_name
    FROM calls d JOIN calls a ON a.id = (
      SELECT x.id FROM calls x WHERE x.command = 'ADD' AND x.ok = 1 AND x.container_id = d.container_id AND x.ifname IS d.ifname
        AND x.parent_id IS NULL AND x.started_at_us < d.started_at_us ORDER BY x.started_at_us DESC LIMIT 1)
    WHERE d.command = 'DEL' AND d.ok = 1 AND d.parent_id IS NULL AND d.started_at_us >= @sinceUs
      AND a.changes_json != 'null' AND d.changes_json != 'null'`);

  // Every ADD with its changes captured since a time, and the argv of their iptables helpers: who reused what.
  const adds = db.prepare<{ sinceUs: number }, LaterRow>(`
    SELECT id, container_id, ifname, started_at_us, changes_json FROM calls
    WHERE command = 'ADD' AND started_at_us > @sinceUs AND changes_json != 'null' AND changes_json != '[]'`);
  const iptablesHelpers = db.prepare<{ sinceUs: number }, { call_id: string; argv_json: string }>(`
    SELECT h.call_id, h.argv_json FROM helpers h JOIN calls c ON c.id = h.call_id
    WHERE c.command = 'ADD' AND c.started_at_us > @sinceUs AND h.path LIKE '%tables%'`);
  const laterAddsSince = (sinceUs: number): Array<LaterAdd & { row: LaterRow }> => {
    const argv = new Map<string, string[][]>();
    for (const h of iptablesHelpers.all({ sinceUs })) {
      const list = argv.get(h.call_id) ?? [];
      list.push(JSON.parse(h.argv_json) as string[]);
      argv.set(h.call_id, list);
    }
    return adds.all({ sinceUs }).map((row) => ({ row, changes: JSON.parse(row.changes_json) as KernelChange[], iptablesArgv: argv.get(row.id) ?? [] }));
  };

  const detect = (nowMs: number) => {
    const found = new Map<string, FindingFields>();
    const candidates = pairs
      .all({ sinceUs: (nowMs - WINDOW_MS) * 1000 })
      .map((p) => ({ p, objects: leftBehindObjects(JSON.parse(p.add_changes) as KernelChange[], JSON.parse(p.del_changes) as KernelChange[]) }))
      .filter((x) => x.objects.length > 0);
    // Read once, and only when something may be left: the ADDs after the earliest of these.
    const later = candidates.length === 0 ? [] : laterAddsSince(candidates.reduce((min, x) => Math.min(min, x.p.add_started_us), Infinity));
    for (const { p, objects } of candidates) {
      const others = later.filter((l) => l.row.started_at_us > p.add_started_us && (l.row.container_id !== p.container_id || l.row.ifname !== p.ifname));
      const { left: unshared, shared } = sharedWithLaterAdds(objects, others);
      const left = unshared.filter((o) => exists(o) === true);
      if (left.length === 0) continue;
      found.set(`${p.container_id}/${p.ifname ?? ''}`, {
        message:
          `${p.plugin} DEL of container ${p.container_id} (${p.ifname ?? 'no ifname'}; call ${p.del_id}) left what its ADD (call ${p.add_id}) created, and the kernel still has it: ` +
          left.map(objectText).join('; ') +
          (shared.length > 0 ? `. Not counted, as shared (a later ADD of another attachment reused them): ${shared.map(objectText).join('; ')}` : ''),
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

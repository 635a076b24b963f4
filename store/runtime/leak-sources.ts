/**
 * The node's attachments as the store knows them, for the leak judgement:
 * libcni's live cache entries and host-local's open reservations (both
 * followed by the cache watcher), merged per attachment; the pod of a
 * container whose cache entry is gone comes from its recorded calls.
 */

import type { Database } from 'better-sqlite3';
import { mergeAttachments, type NodeAttachment } from '../../collector/index.js';

export interface StoredAttachment extends NodeAttachment {
  /** Its cache entry holds the config a DEL needs. */
  readonly hasConfig: boolean;
}

interface EntryRow {
  path: string;
  container_id: string;
  network_name: string | null;
  if_name: string | null;
  netns: string | null;
  ips_json: string;
  pod_namespace: string | null;
  pod_name: string | null;
  file_mtime_ms: number;
  first_seen_ms: number;
  has_config: number;
}

interface ReservationRow {
  path: string;
  ip: string;
  network: string | null;
  container_id: string;
  if_name: string | null;
  from_ms: number;
  pod_namespace: string | null;
  pod_name: string | null;
}

export function createLeakSources(db: Database): { attachments(): StoredAttachment[] } {
  const entries = db.prepare<[], EntryRow>(`
    SELECT path, container_id, network_name, if_name, netns, ips_json, pod_namespace, pod_name, file_mtime_ms, first_seen_ms,
      (format = 'cniCacheV1' AND config_json IS NOT NULL) AS has_config
    FROM cache_entries
    WHERE superseded_at_ms IS NULL AND removed_at_ms IS NULL AND container_id IS NOT NULL AND container_id != ''`);
  const reservations = db.prepare<[], ReservationRow>(`
    SELECT path, ip, network, container_id, if_name, from_ms, pod_namespace, pod_name FROM ip_history
    WHERE source = 'host-local' AND to_ms IS NULL AND container_id IS NOT NULL AND container_id != ''`);
  // A container's pod from its recorded calls (calls_by_container), when no cache entry names it.
  const podOfCalls = db.prepare<[string], { pod_namespace: string | null; pod_name: string }>(
    'SELECT pod_namespace, pod_name FROM calls WHERE container_id = ? AND pod_name IS NOT NULL ORDER BY started_at_us DESC LIMIT 1',
  );
  const pod = (namespace: string | null, name: string | null) => (name === null ? null : { namespace: namespace ?? '', name });

  return {
    attachments() {
      const rows = entries.all();
      const configOf = new Map(rows.map((r) => [r.path, r.has_config === 1]));
      const reservationRows = reservations.all();
      const podOfReservation = new Map(reservationRows.filter((r) => r.pod_name !== null).map((r) => [r.container_id, pod(r.pod_namespace, r.pod_name)]));
      const merged = mergeAttachments(
        rows.map((r) => ({
          path: r.path,
          containerId: r.container_id,
          network: r.network_name,
          ifName: r.if_name,
          netns: r.netns,
          ips: JSON.parse(r.ips_json) as string[],
          pod: pod(r.pod_namespace, r.pod_name),
          writtenAtMs: r.file_mtime_ms > 0 ? r.file_mtime_ms : r.first_seen_ms,
        })),
        reservationRows.map((r) => ({ path: r.path, ip: r.ip, network: r.network ?? '', containerId: r.container_id, ifName: r.if_name, reservedAtMs: r.from_ms })),
        (containerId) => podOfReservation.get(containerId) ?? (() => {
          const c = podOfCalls.get(containerId);
          return c ? pod(c.pod_namespace, c.pod_name) : null;
        })(),
      );
      return merged.map((a) => ({ ...a, hasConfig: a.cachePath !== null && (configOf.get(a.cachePath) ?? false) }));
    },
  };
}

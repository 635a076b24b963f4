/**
 * CNI 1.1 GC against what the node holds. A GC call carries no container id;
 * its stdin names the network and lists `cni.dev/valid-attachments`, the
 * attachments the runtime still uses: everything else of that network
 * should be freed. Compared with host-local's reservations and libcni's
 * cache entries at the GC's start, that gives what the GC should free; what
 * is still reserved some seconds after a GC that succeeded is a finding
 * (`gc-leftover`): host-local has no GC of its own, so its addresses stay
 * reserved until someone removes them.
 */

import type { Database } from 'better-sqlite3';
import { createFindingsLog, type FindingFields } from '../findings/index.js';
import { isoFromMs } from '../../lib/index.js';

export interface Attachment {
  readonly containerId: string;
  readonly ifName: string | null;
}

export interface GcHolding {
  readonly containerId: string | null;
  readonly ifName: string | null;
  readonly ip: string | null;
  readonly source: 'host-local' | 'cache';
  readonly path: string;
  /** Still there now. */
  readonly held: boolean;
}

export interface GcAnalysis {
  readonly callId: string;
  readonly plugin: string;
  readonly network: string | null;
  readonly atMs: number;
  readonly ok: boolean | null;
  readonly validAttachments: readonly Attachment[];
  /** Reservations and cache entries of the network at the GC's start that no valid attachment accounts for. */
  readonly shouldFree: readonly GcHolding[];
}

/** How long after a successful GC its network's state is given to settle before leftovers count. */
const SETTLE_MS = 5_000;
const WINDOW_MS = 60 * 60_000;

interface GcCall {
  id: string;
  plugin: string;
  ok: number | null;
  started_at_us: number;
  ended_at_us: number | null;
  stdin: string | null;
}

export function parseGcStdin(stdin: string | null): { network: string | null; valid: Attachment[] } | null {
  if (stdin === null) return null;
  let json: unknown;
  try {
    json = JSON.parse(stdin);
  } catch {
    return null;
  }
  if (json === null || typeof json !== 'object') return null;
  const o = json as Record<string, unknown>;
  const list = o['cni.dev/valid-attachments'];
  const valid = Array.isArray(list)
    ? list.flatMap((a) => {
        const x = a as Record<string, unknown> | null;
        return x && typeof x.containerID === 'string' ? [{ containerId: x.containerID, ifName: typeof x.ifname === 'string' ? x.ifname : null }] : [];
      })
    : [];
  return { network: typeof o.name === 'string' ? o.name : null, valid };
}

const isValid = (valid: readonly Attachment[], containerId: string | null, ifName: string | null) =>
  containerId !== null && valid.some((a) => a.containerId === containerId && (a.ifName === null || ifName === null || a.ifName === ifName));

export interface GcChecks {
  /** A recorded GC call, compared with what the node held when it ran; null when the call is no GC. */
  analyse(callId: string, nowMs: number): GcAnalysis | null;
  /** Recent GC calls, newest first, each analysed. */
  recent(limit: number, nowMs: number): GcAnalysis[];
  /** Opens and resolves `gc-leftover` findings. */
  detect(nowMs: number): void;
}

export function createGcChecks(db: Database): GcChecks {
  const findings = createFindingsLog(db);
  const gcCall = db.prepare<[string], GcCall>("SELECT id, plugin, ok, started_at_us, ended_at_us, CAST(stdin AS TEXT) AS stdin FROM calls WHERE id = ? AND command = 'GC'");
  const recentGc = db.prepare<[number], { id: string }>("SELECT id FROM calls WHERE command = 'GC' ORDER BY started_at_us DESC LIMIT ?");
  const okGcSince = db.prepare<[number], GcCall>(
    "SELECT id, plugin, ok, started_at_us, ended_at_us, CAST(stdin AS TEXT) AS stdin FROM calls WHERE command = 'GC' AND started_at_us >= ? AND ok = 1 ORDER BY started_at_us",
  );
  const reservationsAt = db.prepare<{ network: string; atMs: number }, { container_id: string | null; if_name: string | null; ip: string; path: string; to_ms: number | null }>(`
    SELECT container_id, if_name, ip, path, to_ms FROM ip_history
    WHERE source = 'host-local' AND network = @network AND from_ms <= @atMs AND (to_ms IS NULL OR to_ms > @atMs)`);
  const cacheAt = db.prepare<{ network: string; atMs: number }, { container_id: string | null; if_name: string | null; path: string; gone: number }>(`
    SELECT container_id, if_name, path, (superseded_at_ms IS NOT NULL OR removed_at_ms IS NOT NULL) AS gone FROM cache_entries
    WHERE network_name = @network AND first_seen_ms <= @atMs AND coalesce(superseded_at_ms, removed_at_ms, 9007199254740991) > @atMs`);

  const analyseRow = (c: GcCall): GcAnalysis => {
    const parsed = parseGcStdin(c.stdin);
    const atMs = Math.floor(c.started_at_us / 1000);
    const network = parsed?.network ?? null;
    const valid = parsed?.valid ?? [];
    const shouldFree: GcHolding[] = [];
    if (network !== null) {
      for (const r of reservationsAt.all({ network, atMs })) {
        if (!isValid(valid, r.container_id, r.if_name)) shouldFree.push({ containerId: r.container_id, ifName: r.if_name, ip: r.ip, source: 'host-local', path: r.path, held: r.to_ms === null });
      }
      for (const e of cacheAt.all({ network, atMs })) {
        if (!isValid(valid, e.container_id, e.if_name)) shouldFree.push({ containerId: e.container_id, ifName: e.if_name, ip: null, source: 'cache', path: e.path, held: e.gone === 0 });
      }
    }
    return { callId: c.id, plugin: c.plugin, network, atMs, ok: c.ok === null ? null : c.ok === 1, validAttachments: valid, shouldFree };
  };

  const detect = db.transaction((nowMs: number) => {
    // The latest successful GC of each network decides what should be gone now.
    const latest = new Map<string, GcAnalysis>();
    for (const c of okGcSince.all((nowMs - WINDOW_MS) * 1000)) {
      if (c.ended_at_us !== null && c.ended_at_us / 1000 > nowMs - SETTLE_MS) continue;
      const a = analyseRow(c);
      if (a.network !== null) latest.set(a.network, a);
    }
    const found = new Map<string, FindingFields>();
    for (const a of latest.values()) {
      for (const h of a.shouldFree) {
        if (!h.held || h.source !== 'host-local' || h.ip === null) continue;
        found.set(`${a.network}/${h.ip}`, {
          message:
            `host-local still holds ${h.ip} on network "${a.network}" for container ${h.containerId ?? '(unknown)'}${h.ifName ? ` (${h.ifName})` : ''}, which the GC at ${isoFromMs(a.atMs)} (call ${a.callId}) did not list as a valid attachment: ` +
            `host-local frees nothing on GC, so the address stays reserved; if no pod uses it, delete ${h.path}`,
          path: h.path,
          containerId: h.containerId,
          network: a.network,
          ip: h.ip,
          callId: a.callId,
        });
      }
    }
    for (const [subject, fields] of found) findings.open('gc-leftover', subject, fields, nowMs);
    for (const subject of findings.openSubjects('gc-leftover')) if (!found.has(subject)) findings.resolve('gc-leftover', subject, nowMs);
  });

  return {
    analyse(callId) {
      const c = gcCall.get(callId);
      return c ? analyseRow(c) : null;
    },
    recent(limit) {
      return recentGc.all(limit).flatMap((r) => {
        const c = gcCall.get(r.id);
        return c ? [analyseRow(c)] : [];
      });
    },
    detect: (nowMs) => void detect(nowMs),
  };
}

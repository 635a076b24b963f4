/** The findings log's groups → the contract's Finding and FindingPage (api/schemas/findings.ts). */

import { FINDING_SEVERITY, severityRankOf, type CacheFindingKind, type FindingGroupPage, type StoredFindingGroup } from '../../store/index.js';
import type { Finding, FindingPage } from '../schemas/findings.js';
import { isoFromMs } from '../../lib/index.js';

export function presentFinding(f: StoredFindingGroup): Finding {
  return {
    id: f.id,
    kind: f.kind,
    severity: f.severity,
    subject: f.subject,
    message: f.message,
    pod: f.podName === null ? null : { namespace: f.podNamespace, name: f.podName },
    containerId: f.containerId,
    network: f.network,
    ip: f.ip,
    path: f.path,
    callId: f.callId,
    count: f.count,
    occurrences: f.occurrences,
    firstSeen: isoFromMs(f.groupFirstSeenMs),
    lastSeen: isoFromMs(f.lastSeenMs),
    resolvedAt: f.resolvedAtMs === null ? null : isoFromMs(f.resolvedAtMs),
  };
}

export function presentFindingPage(page: FindingGroupPage): FindingPage {
  const byKind = (Object.entries(page.byKind) as [CacheFindingKind, number][])
    .map(([kind, count]) => ({ kind, severity: FINDING_SEVERITY[kind], count }))
    .sort((a, b) => severityRankOf(a.severity) - severityRankOf(b.severity) || b.count - a.count || a.kind.localeCompare(b.kind));
  return { items: page.items.map(presentFinding), total: page.total, byKind, nextCursor: page.nextCursor };
}

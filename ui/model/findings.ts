/**
 * Findings grouped as the page shows them: by severity (worst first), then kind, with the counts over
 * all pages (the API's byKind) and this page's subjects under each. Pure.
 */

import type { Finding, FindingPage } from '../client/types.js';

export const SEVERITIES = ['critical', 'warning', 'info'] as const;
export type Severity = (typeof SEVERITIES)[number];

export interface KindGroup {
  readonly kind: string;
  readonly count: number;
  readonly items: readonly Finding[];
}

export interface SeverityGroup {
  readonly severity: Severity;
  readonly count: number;
  readonly kinds: readonly KindGroup[];
}

export function groupFindings(page: Pick<FindingPage, 'items' | 'byKind'>): SeverityGroup[] {
  return SEVERITIES.map((severity) => {
    const kinds = page.byKind
      .filter((k) => k.severity === severity)
      .map((k) => ({ kind: k.kind, count: k.count, items: page.items.filter((f) => f.kind === k.kind) }));
    // A kind on this page the counts missed (should not happen) still shows.
    for (const f of page.items)
      if (f.severity === severity && !kinds.some((k) => k.kind === f.kind)) kinds.push({ kind: f.kind, count: 0, items: page.items.filter((g) => g.kind === f.kind) });
    return { severity, count: kinds.reduce((n, k) => n + k.count, 0), kinds };
  }).filter((g) => g.kinds.length > 0);
}

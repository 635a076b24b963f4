/**
 * Filters as URL queries and back, so every list can be shared and reloaded as it is. Pure. Empty values
 * are dropped both ways; only known fields pass, so a hand-edited URL cannot reach the API with junk.
 */

export const CNI_COMMANDS = ['ADD', 'DEL', 'CHECK', 'VERSION', 'GC', 'STATUS'] as const;

/** The tail's filter fields (the same as its websocket query). */
export const TAIL_FIELDS = ['namespace', 'pod', 'command', 'plugin', 'failed'] as const;
/** The calls page's filter fields (GET /api/v1/calls). */
export const CALL_FIELDS = ['namespace', 'pod', 'podUid', 'containerId', 'command', 'plugin', 'network', 'failed', 'minDurationMs', 'since', 'until', 'status', 'cursor'] as const;
/** The findings page's (GET /api/v1/findings). */
export const FINDING_FIELDS = ['severity', 'kind', 'pod', 'includeResolved', 'cursor'] as const;

export type Filter<F extends readonly string[]> = Partial<Record<F[number], string>>;

export function filterFromQuery<F extends readonly string[]>(fields: F, query: Readonly<Record<string, string | undefined>>): Filter<F> {
  const out: Partial<Record<string, string>> = {};
  for (const field of fields) {
    const value = query[field]?.trim();
    if (value) out[field] = value;
  }
  return out as Filter<F>;
}

/** `?a=1&b=2` (fields in their declared order), or '' when nothing is set. */
export function queryString<F extends readonly string[]>(fields: F, filter: Filter<F>): string {
  const params = new URLSearchParams();
  for (const field of fields) {
    const value = (filter as Record<string, string | undefined>)[field]?.trim();
    if (value) params.set(field, value);
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** A pod search as typed: `namespace/name`, or a UID (then the calls say which pod it is). */
export type PodSearch = { readonly kind: 'name'; readonly namespace: string; readonly name: string } | { readonly kind: 'uid'; readonly uid: string } | null;

const UID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function parsePodSearch(text: string): PodSearch {
  const t = text.trim();
  if (!t) return null;
  if (UID.test(t)) return { kind: 'uid', uid: t };
  const slash = t.indexOf('/');
  if (slash <= 0 || slash === t.length - 1) return null;
  return { kind: 'name', namespace: t.slice(0, slash), name: t.slice(slash + 1) };
}

/** The page of a pod's story. */
export function podPath(namespace: string, name: string, podUid?: string | null): string {
  const base = `/ui/pods/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;
  return podUid ? `${base}?podUid=${encodeURIComponent(podUid)}` : base;
}

export function callPath(id: string): string {
  return `/ui/calls/${encodeURIComponent(id)}`;
}

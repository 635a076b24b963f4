/**
 * The `key1=value1,key2=value2` lists of OTEL_EXPORTER_OTLP_HEADERS and
 * OTEL_RESOURCE_ATTRIBUTES (the W3C Baggage format without properties):
 * values are percent-decoded, blanks around entries ignored. A problem is
 * described without quoting any value: header values are credentials.
 */

export type KeyValueList = { readonly ok: true; readonly entries: readonly (readonly [string, string])[] } | { readonly ok: false; readonly problem: string };

export function parseKeyValueList(text: string): KeyValueList {
  const entries: [string, string][] = [];
  const parts = text.split(',');
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!.trim();
    if (part === '') continue;
    const eq = part.indexOf('=');
    if (eq <= 0) return { ok: false, problem: `entry ${i + 1} is not key=value` };
    const key = part.slice(0, eq).trim();
    let value: string;
    try {
      value = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      return { ok: false, problem: `the value of "${key}" has a malformed %-escape` };
    }
    entries.push([key, value]);
  }
  return { ok: true, entries };
}

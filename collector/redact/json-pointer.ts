/**
 * JSON pointers (RFC 6901) for redaction rules and for naming what was
 * redacted: `/plugins/0/auth/password`, with `~1` for `/` and `~0` for `~`
 * inside a key. A rule segment `*` stands for any one key or index (so a
 * rule can cover every plugin of a conflist); RFC 6901 has no wildcard, and
 * a key that is literally `*` is not something CNI configs use.
 */

/** A parsed rule: its segments, `*` matching any one segment. */
export type PointerRule = readonly string[];

export const ANY_SEGMENT = '*';

/** The rule's segments, or a message saying what is wrong with the text. */
export function parsePointer(text: string): { ok: true; rule: PointerRule } | { ok: false; message: string } {
  if (!text.startsWith('/')) return { ok: false, message: `JSON pointer ${JSON.stringify(text)} must start with "/" (e.g. /ipam/token)` };
  if (/~(?![01])/.test(text)) return { ok: false, message: `JSON pointer ${JSON.stringify(text)} has a "~" not followed by 0 or 1 (write ~0 for "~", ~1 for "/")` };
  return { ok: true, rule: text.slice(1).split('/').map(unescapeSegment) };
}

export function formatPointer(segments: readonly string[]): string {
  let out = '';
  for (const s of segments) out += `/${escapeSegment(s)}`;
  return out;
}

export function escapeSegment(segment: string): string {
  return segment.includes('~') || segment.includes('/') ? segment.replaceAll('~', '~0').replaceAll('/', '~1') : segment;
}

// RFC 6901 §4 decodes ~1 before ~0: the other order would turn "~01" into "/" instead of "~1".
function unescapeSegment(segment: string): string {
  return segment.replaceAll('~1', '/').replaceAll('~0', '~');
}

/** Whether a value at `path` is named by one of the rules (same depth, each segment equal or `*`). */
export function pointerMatches(rules: readonly PointerRule[], path: readonly string[]): boolean {
  for (const rule of rules) {
    if (rule.length !== path.length) continue;
    let all = true;
    for (let i = 0; i < rule.length; i++) {
      if (rule[i] !== ANY_SEGMENT && rule[i] !== path[i]) {
        all = false;
        break;
      }
    }
    if (all) return true;
  }
  return false;
}

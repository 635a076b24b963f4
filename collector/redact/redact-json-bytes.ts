/**
 * Redacts secrets inside a JSON payload without parsing it into objects:
 * one pass over the bytes that follows strings, keys, objects and arrays,
 * and splices a marker over each secret value. Everything else stays byte
 * for byte as the plugin wrote it (key order, spacing, number spelling,
 * escapes), so a redacted config still reads like the original.
 *
 * It is tolerant on purpose: a payload cut at the capture cap, two JSON
 * documents in a row, or trailing log text are scanned as far as they go,
 * and a secret value that runs to the end of a cut payload is redacted to
 * the end. Structural bytes are ASCII and never occur inside a UTF-8
 * multi-byte sequence, so scanning bytes is safe for any text.
 */

import { formatPointer, pointerMatches } from './json-pointer.js';
import { KeyTable } from './key-table.js';
import { MAX_REPORTED_POINTERS, REDACTION_MARKER, keyClassifier, type RedactionRules } from './redaction-rules.js';

export interface RedactedBytes {
  readonly bytes: Buffer;
  /** JSON pointers of the values replaced (at most MAX_REPORTED_POINTERS). */
  readonly pointers: readonly string[];
}

/** Deeper than any real config: a value nested below this is redacted whole rather than tracked. */
export const MAX_TRACKED_DEPTH = 256;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const MARKER = Buffer.from(JSON.stringify(REDACTION_MARKER));
const PEM_PRIVATE_KEY = Buffer.from('PRIVATE KEY-----');

interface Frame {
  readonly object: boolean;
  key: string;
  /** Whether `key` names a secret (the key rules' decision). */
  secretKey: boolean;
  index: number;
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** The first non-space byte opens an object or an array: the only payloads worth scanning. */
export function looksLikeJson(bytes: Buffer): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (isSpace(c)) continue;
    return c === LBRACE || c === LBRACKET;
  }
  return false;
}

export type BytesRedactor = (bytes: Buffer) => RedactedBytes | null;

/**
 * A redactor for these rules: null when the payload holds nothing secret
 * (the caller keeps its bytes). A JSON payload is scanned whole; any other
 * (log text on stderr, an error message on stdout) line by line, from the
 * first `{` or `[` of each line, because plugins log configs and results
 * inside their messages (`failed to set up: {"name":…,"token":…}`).
 */
export function createBytesRedactor(rules: RedactionRules): BytesRedactor {
  const keys = new KeyTable(decodeKey, keyClassifier(rules));
  const pointers = rules.pointers;
  return (bytes) => (looksLikeJson(bytes) ? scan(bytes, keys, pointers) : scanLines(bytes, keys, pointers));
}

const NEWLINE = 0x0a;

/** JSON inside text: each line scanned on its own from its first bracket, so one stray quote cannot hide the lines after it. */
function scanLines(b: Buffer, keys: KeyTable, pointerRules: RedactionRules['pointers']): RedactedBytes | null {
  let parts: Buffer[] | null = null;
  let pointers: string[] = [];
  let kept = 0;
  for (let line = 0; line < b.length; ) {
    let end = b.indexOf(NEWLINE, line);
    if (end < 0) end = b.length;
    const brace = b.indexOf(LBRACE, line);
    const bracket = b.indexOf(LBRACKET, line);
    const first = brace < 0 || brace >= end ? bracket : bracket < 0 || bracket >= end ? brace : Math.min(brace, bracket);
    if (first >= 0 && first < end) {
      const r = scan(b.subarray(first, end), keys, pointerRules);
      if (r !== null) {
        parts ??= [];
        parts.push(b.subarray(kept, first), r.bytes);
        kept = end;
        pointers = pointers.concat(r.pointers).slice(0, MAX_REPORTED_POINTERS);
      }
    }
    line = end + 1;
  }
  if (parts === null) return null;
  parts.push(b.subarray(kept));
  return { bytes: Buffer.concat(parts), pointers };
}

function scan(b: Buffer, keys: KeyTable, pointerRules: RedactionRules['pointers']): RedactedBytes | null {
  const n = b.length;
  const stack: Frame[] = [];
  const edits: number[] = [];
  const reported: string[] = [];
  let pem = b.indexOf(PEM_PRIVATE_KEY);
  // 'value': a value (or a closing bracket) comes next; 'key': a key or '}'; 'after': ',' or a closing bracket.
  let expect: 'value' | 'key' | 'after' = 'value';
  let i = 0;

  const redact = (from: number, to: number) => {
    edits.push(from, to);
    if (reported.length < MAX_REPORTED_POINTERS) reported.push(formatPointer(pathOf(stack)));
  };

  while (i < n) {
    const c = b[i]!;
    if (isSpace(c)) {
      i++;
      continue;
    }
    const top = stack.length > 0 ? stack[stack.length - 1]! : null;
    if (expect === 'key') {
      if (c === QUOTE) {
        const end = stringEnd(b, i);
        const known = keys.lookup(b, i + 1, end > i + 1 && b[end - 1] === QUOTE ? end - 1 : end);
        top!.key = known.key;
        top!.secretKey = known.secret;
        i = end;
        while (i < n && isSpace(b[i]!)) i++;
        if (i < n && b[i] === COLON) i++;
        expect = 'value';
      } else if (c === RBRACE || c === RBRACKET) {
        stack.pop();
        i++;
        expect = 'after';
      } else i++; // not JSON here: skip the byte and look for the next key
      continue;
    }
    if (expect === 'after') {
      if (c === COMMA && top !== null) {
        if (top.object) expect = 'key';
        else {
          top.index++;
          expect = 'value';
        }
        i++;
      } else if ((c === RBRACE || c === RBRACKET) && top !== null) {
        stack.pop();
        i++;
      } else if (top === null) expect = 'value'; // another document after the first
      else i++;
      continue;
    }
    // A value.
    if ((c === RBRACKET || c === RBRACE) && top !== null) {
      stack.pop(); // `[]`, or a trailing comma
      i++;
      expect = 'after';
      continue;
    }
    const secret =
      top !== null &&
      ((top.object && top.secretKey) || (pointerRules.length > 0 && pointerMatches(pointerRules, pathOf(stack))));
    if (secret || ((c === LBRACE || c === LBRACKET) && stack.length >= MAX_TRACKED_DEPTH)) {
      const end = valueEnd(b, i);
      redact(i, end);
      i = end;
    } else if (c === LBRACE || c === LBRACKET) {
      stack.push({ object: c === LBRACE, key: '', secretKey: false, index: 0 });
      i++;
      expect = c === LBRACE ? 'key' : 'value';
      continue;
    } else if (c === QUOTE) {
      const end = stringEnd(b, i);
      if (pem >= 0 && pem < i) pem = b.indexOf(PEM_PRIVATE_KEY, i);
      if (pem >= 0 && pem < end) redact(i, end);
      i = end;
    } else i = literalEnd(b, i);
    expect = 'after';
  }
  if (edits.length === 0) return null;
  return { bytes: splice(b, edits), pointers: reported };
}

function pathOf(stack: readonly Frame[]): string[] {
  return stack.map((f) => (f.object ? f.key : String(f.index)));
}

/**
 * Index just past the string starting at `i` (a quote), or the end of a cut
 * payload. A plain loop: most strings are a few bytes, where the call into
 * Buffer#indexOf costs more than the scan.
 */
function stringEnd(b: Buffer, i: number): number {
  const n = b.length;
  for (let j = i + 1; j < n; j++) {
    const c = b[j]!;
    if (c === QUOTE) return j + 1;
    if (c === BACKSLASH) j++;
  }
  return n;
}

/** The key in b[start, stop) (between its quotes), JSON escapes undone. */
function decodeKey(b: Buffer, start: number, stop: number): string {
  const raw = b.toString('utf8', start, stop);
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}

/** Past a whole value: a string, a balanced object/array (to the end when cut), or a literal. */
function valueEnd(b: Buffer, i: number): number {
  const c = b[i]!;
  if (c === QUOTE) return stringEnd(b, i);
  if (c !== LBRACE && c !== LBRACKET) return literalEnd(b, i);
  let depth = 0;
  let j = i;
  while (j < b.length) {
    const d = b[j]!;
    if (d === QUOTE) {
      j = stringEnd(b, j);
      continue;
    }
    if (d === LBRACE || d === LBRACKET) depth++;
    else if (d === RBRACE || d === RBRACKET) {
      depth--;
      if (depth === 0) return j + 1;
    }
    j++;
  }
  return b.length;
}

/** A number, true/false/null, or whatever non-JSON run sits there; at least one byte, so the scan moves on. */
function literalEnd(b: Buffer, i: number): number {
  let j = i;
  while (j < b.length) {
    const c = b[j]!;
    if (isSpace(c) || c === COMMA || c === RBRACE || c === RBRACKET || c === QUOTE || c === COLON || c === LBRACE || c === LBRACKET) break;
    j++;
  }
  return j > i ? j : i + 1;
}

function splice(b: Buffer, edits: readonly number[]): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (let k = 0; k < edits.length; k += 2) {
    parts.push(b.subarray(at, edits[k]), MARKER);
    at = edits[k + 1]!;
  }
  parts.push(b.subarray(at));
  return Buffer.concat(parts);
}

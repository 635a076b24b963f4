/**
 * Where a JSON text is broken, as an editor shows it (line and column,
 * 1-based). JSON.parse decides whether the text is valid (it is as strict as
 * the Go parser runtimes use: no comments, no trailing commas), but V8 names
 * no position for an unexpected token, such as the trailing comma of a
 * plugins list; jsonc-parser's scanner, in strict mode, gives the offset of
 * every error, so it is asked where.
 */

import { parseTree, printParseErrorCode, type ParseError } from 'jsonc-parser';
import type { JsonErrorPosition } from './types.js';

const WHAT: Readonly<Record<string, string>> = {
  ValueExpected: 'a value is expected here (a trailing comma, or a missing value)',
  PropertyNameExpected: 'a property name in double quotes is expected here (a trailing comma?)',
  CommaExpected: "',' is expected here",
  ColonExpected: "':' is expected here",
  CloseBraceExpected: "'}' is expected here",
  CloseBracketExpected: "']' is expected here",
  EndOfFileExpected: 'unexpected text after the end of the JSON',
  InvalidSymbol: 'invalid symbol (strings need double quotes; true, false and null are lowercase)',
  InvalidCommentToken: 'comments are not allowed in JSON',
  UnexpectedEndOfComment: 'comments are not allowed in JSON',
  UnexpectedEndOfString: 'unterminated string',
  UnexpectedEndOfNumber: 'incomplete number',
  InvalidUnicode: 'invalid \\u escape',
  InvalidEscapeCharacter: 'invalid escape character',
  InvalidCharacter: 'invalid character in a string (control characters must be escaped)',
};

/** The first syntax error of `text`, which JSON.parse rejected with `err`. */
export function jsonErrorPosition(text: string, err: unknown): JsonErrorPosition {
  if (text.charCodeAt(0) === 0xfeff) {
    return { message: "it starts with a byte-order mark, which runtimes' JSON parser rejects: save it as UTF-8 without BOM", line: 1, column: 1 };
  }
  const errors: ParseError[] = [];
  parseTree(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  const first = errors[0];
  const offset = first?.offset ?? v8Offset(err) ?? text.length;
  const message = first ? (WHAT[printParseErrorCode(first.error)] ?? printParseErrorCode(first.error)) : v8Message(err);
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { message, line, column: offset - (before.lastIndexOf('\n') + 1) + 1 };
}

function v8Offset(err: unknown): number | null {
  const at = /at position (\d+)/.exec(err instanceof Error ? err.message : '');
  return at ? Number(at[1]) : null;
}

function v8Message(err: unknown): string {
  const raw = err instanceof Error ? err.message : String(err);
  return raw.replace(/ in JSON at position \d+.*$/s, '').trim() || 'invalid JSON';
}

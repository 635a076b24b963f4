/**
 * Text into POSIX sh safely. Everything recorded comes from the node and
 * may hold anything (a quote, `$(…)`, a newline), so a value becomes one
 * single-quoted word, inside which sh interprets nothing, and text in a
 * comment loses its line breaks so it cannot end the comment.
 */

/** Characters that mean nothing to sh anywhere in a word (no leading `~`, `#` or `-` can arise from them alone). */
const PLAIN_WORD = /^[A-Za-z0-9_/.,:=@%+-]+$/;

/**
 * One sh word that expands to exactly `value`. Callers must remove NUL
 * first: no shell string can hold one.
 */
export function shQuote(value: string): string {
  if (PLAIN_WORD.test(value) && !value.startsWith('-')) return value;
  // Inside '…' only ' is special; it is written as: close quote, \', reopen.
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/** `text` on one comment line: control characters (newlines included) shown as \xNN instead of acted on. */
export function commentSafe(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

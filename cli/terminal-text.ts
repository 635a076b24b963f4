/**
 * Text recorded on the node (a plugin's stdout and stderr, argv, env values,
 * a pod name from CNI_ARGS, a cache file's fields) comes from whoever can
 * run a plugin or create a pod. Printed raw, `\x1b]0;…\x07` retitles the
 * operator's terminal, `\x1b[2J` clears it, `\x1b[31m` fakes an error, a
 * right-to-left override reorders what they read (kubectl's CVE-2021-25743
 * was this). Every human-readable line the CLI prints goes through
 * `neutralise`, on a terminal and off it; `--json` and `--raw` output do
 * not (they are for programs, byte for byte).
 *
 * What it shows visibly instead of passing through: C0 controls (ESC
 * included, so CSI and OSC sequences are inert text), DEL, C1 controls,
 * Unicode's bidi embeddings, overrides, isolates and marks, and its line
 * and paragraph separators. Tab and newline pass only where the layout
 * allows (a payload's block), else they are shown as `\t` and `\n`.
 */

export interface NeutraliseOptions {
  /** Keep `\n` and `\t` (a block of text); otherwise (one line, a column) they are shown escaped. */
  readonly multiline?: boolean;
  /**
   * Pass the CLI's own style marks (U+E000–U+E00F, see output.ts) through. Only the final writer sets
   * this: recorded text is neutralised without it first, so it can never carry a mark of its own.
   */
  readonly keepStyleMarks?: boolean;
}

// C0 but tab and newline, DEL, C1; bidi marks (U+061C, U+200E–F), embeddings and overrides (U+202A–E), isolates
// (U+2066–9), line and paragraph separators (U+2028–9); the private-use range the style marks live in.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ue000-\ue0ff]/g;
// eslint-disable-next-line no-control-regex -- the same, the style marks let through
const UNSAFE_WITH_MARKS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ue010-\ue0ff]/g;
const LINE_BREAKS = /[\t\n]/g;

const SHOWN: Readonly<Record<string, string>> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' };

function show(ch: string): string {
  const known = SHOWN[ch];
  if (known !== undefined) return known;
  const code = ch.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `text` with every control character and bidi control shown as an escape (`\x1b`, `\u202e`). */
export function neutralise(text: string, opts: NeutraliseOptions = {}): string {
  const out = text.replace(opts.keepStyleMarks ? UNSAFE_WITH_MARKS : UNSAFE, show);
  return opts.multiline ? out : out.replace(LINE_BREAKS, show);
}

/** For one field of a line: recorded text, neutralised now so columns are measured on what will be printed. */
export const safe = (text: string | null | undefined): string => (text === null || text === undefined ? '' : neutralise(text));

/** For a block (a payload, a message): newlines and tabs kept. */
export const safeBlock = (text: string): string => neutralise(text, { multiline: true });

/**
 * Where every command's output goes. Lines for people pass through one
 * writer that neutralises them (terminal-text.ts) and only then turns the
 * CLI's own style marks into colours, or drops them: colour only when the
 * stream is a terminal that has colours (`hasColors()`, which honours
 * NO_COLOR, FORCE_COLOR and TERM=dumb). Styles are marks (private-use
 * characters) rather than escape codes while a line is built, so padding
 * measures what is seen and recorded text can never bring codes of its own.
 * JSON and raw bytes are written as they are.
 *
 * A reader that goes away (`cnirec calls | head`) ends the command
 * quietly: EPIPE is not an error to report.
 */

import { neutralise } from './terminal-text.js';

const MARK = { reset: '\ue000', red: '\ue001', green: '\ue002', yellow: '\ue003', dim: '\ue004', bold: '\ue005' } as const;
const SGR: Readonly<Record<string, string>> = {
  [MARK.reset]: '\u001b[0m',
  [MARK.red]: '\u001b[31m',
  [MARK.green]: '\u001b[32m',
  [MARK.yellow]: '\u001b[33m',
  [MARK.dim]: '\u001b[2m',
  [MARK.bold]: '\u001b[1m',
};
const MARKS = /[\ue000-\ue00f]/g;

const style = (mark: string) => (s: string) => (s === '' ? s : `${mark}${s}${MARK.reset}`);
export const red = style(MARK.red);
export const green = style(MARK.green);
export const yellow = style(MARK.yellow);
export const dim = style(MARK.dim);
export const bold = style(MARK.bold);

/** Characters a person sees: style marks take no room. */
export const visibleLength = (s: string): number => s.replace(MARKS, '').length;
export const padEnd = (s: string, width: number): string => s + ' '.repeat(Math.max(0, width - visibleLength(s)));
export const padStart = (s: string, width: number): string => ' '.repeat(Math.max(0, width - visibleLength(s))) + s;
/** Cut to `width` visible characters, with an ellipsis. */
export const clip = (s: string, width: number): string => (s.length > width ? `${s.slice(0, Math.max(0, width - 1))}…` : s);

interface Stream {
  write(chunk: string | Uint8Array): boolean;
  readonly isTTY?: boolean;
  hasColors?(): boolean;
}

export interface Output {
  /** Lines for people: neutralised, styled or not. */
  lines(lines: readonly string[]): void;
  line(line: string): void;
  /** A program's bytes (JSON, a script, a raw payload), as they are. */
  raw(data: string | Uint8Array): void;
  readonly color: boolean;
}

export function createOutput(stream: Stream): Output {
  const color = stream.isTTY === true && typeof stream.hasColors === 'function' && stream.hasColors();
  const render = (line: string) => neutralise(line, { multiline: true, keepStyleMarks: true }).replace(MARKS, (m) => (color ? SGR[m]! : ''));
  return {
    color,
    lines(lines) {
      if (lines.length > 0) stream.write(`${lines.map(render).join('\n')}\n`);
    },
    line(line) {
      stream.write(`${render(line)}\n`);
    },
    raw(data) {
      stream.write(data);
    },
  };
}

/** The process's stdout and stderr, made once. */
export const stdout = createOutput(process.stdout);
export const stderr = createOutput(process.stderr);

/** A closed pipe downstream (`| head`) ends the process quietly, as other Unix tools do. */
export function endQuietlyOnClosedPipe(): void {
  for (const s of [process.stdout, process.stderr]) {
    s.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw err;
    });
  }
}

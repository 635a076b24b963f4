/**
 * `cnirec show ID`: one call in full (what went wrong first, what the record
 * may lack, then argv, env, stdin, stdout, stderr, what it changed in the
 * kernel and what the kernel said, delegated calls and helpers); `--raw STREAM`
 * writes one payload's exact bytes; `-o json` the API's answer.
 * `cnirec replay ID`: the script that re-runs the call by hand.
 */

import type { CallDetail, Payload } from '../api/index.js';
import { getJson, getText, type ClientOptions } from './api-client.js';
import { recordCaveatsBlock } from './call-caveats.js';
import { changesBlock } from './changes-block.js';
import { UsageError } from './errors.js';
import { OUTPUT_FLAGS, outputMode, parseCommand } from './flags.js';
import { callLine, callNotes, durationText, outcomeText } from './format.js';
import { bold, dim, padStart, stderr, stdout, yellow } from './output.js';
import { neutralise, safe, safeBlock } from './terminal-text.js';

export const SHOW_USAGE = 'usage: cnirec show CALL_ID [-o json] [--raw stdin|stdout|stderr]';
export const REPLAY_USAGE = 'usage: cnirec replay CALL_ID > replay.sh';

const STREAMS = ['stdin', 'stdout', 'stderr'] as const;

export async function showCommand(args: string[], client: ClientOptions): Promise<number> {
  const { values, positionals } = parseCommand(args, { ...OUTPUT_FLAGS, raw: { type: 'string' } }, SHOW_USAGE, true);
  const mode = outputMode(values, SHOW_USAGE);
  const id = onlyId(positionals, SHOW_USAGE);
  const raw = values.raw;
  if (raw !== undefined && !(STREAMS as readonly string[]).includes(raw)) throw new UsageError(`--raw takes stdin, stdout or stderr, not "${raw}"`, SHOW_USAGE);
  const call: CallDetail = await getJson(client, `/api/v1/calls/${encodeURIComponent(id)}`);
  if (raw !== undefined) {
    // The bytes as captured (after redaction), for a file or a pipe: nothing added, nothing escaped.
    stdout.raw(Buffer.from(call[raw as (typeof STREAMS)[number]].base64, 'base64'));
    return 0;
  }
  if (mode === 'json') {
    stdout.raw(`${JSON.stringify(call, null, 2)}\n`);
    return 0;
  }
  stdout.lines(formatCallDetail(call));
  return 0;
}

/** The call's page as terminal lines. Pure, for tests. */
export function formatCallDetail(call: CallDetail): string[] {
  const out: string[] = [callLine(call, { time: 'absolute', wide: true, notes: false })];
  // What went wrong, whole, before the details.
  if (call.ok === false) out.push(call.error ? `${bold('error')}  ${safeBlock(call.error)}` : `${bold('error')}  ${dim('(the plugin printed no error message: see stdout and stderr below)')}`);
  // Lost records are said in the caveats, with the rest of what the record may lack.
  const notes = callNotes({ ...call, ok: null, error: null, lostRecords: false });
  if (notes) out.push(notes);
  out.push(...recordCaveatsBlock(call));
  out.push('', `${bold('argv')}  ${call.argv.map(safe).join(' ')}`);
  for (const [k, v] of Object.entries(call.env)) out.push(`${bold('env')}   ${safe(k)}=${safe(v)}`);
  const light = call.captureMode === 'light';
  out.push(
    '',
    ...payloadBlock('stdin', call.stdin, call.id, { light }),
    ...payloadBlock('stdout', call.stdout, call.id, { light, afterExit: call.outputAfterExit.stdout }),
    ...payloadBlock('stderr', call.stderr, call.id, { light, afterExit: call.outputAfterExit.stderr }),
  );
  out.push(...changesBlock(call));
  if (call.children.length > 0) {
    out.push(bold('delegated calls'));
    for (const c of call.children) out.push(callLine(c, { time: 'absolute', indent: '' }));
  }
  if (call.helpers.length > 0) {
    out.push(bold('helpers'));
    for (const h of call.helpers) {
      const outcome = outcomeText({ status: h.exitCode === null && h.signal === null ? 'running' : 'finished', exitCode: h.exitCode, signal: h.signal });
      out.push(`  ${padStart(durationText(h.durationMs), 9)}  ${outcome}  ${h.argv.map(safe).join(' ')}`);
      if (h.stderr.text) out.push(dim(`      ${safeBlock(h.stderr.text.trimEnd()).split('\n').join('\n      ')}`));
    }
  }
  return out;
}

interface PayloadContext {
  /** The call was recorded without payloads: an empty stream says nothing of what went by. */
  readonly light: boolean;
  /** Where the bytes begin that descendants wrote after the plugin exited (null: none). */
  readonly afterExit?: number | null;
}

function payloadBlock(name: (typeof STREAMS)[number], p: Payload, id: string, ctx: PayloadContext): string[] {
  if (p.bytes === 0) return [`${bold(name)}  ${dim(ctx.light && !p.truncated ? '(not captured: light capture)' : p.truncated ? `(none captured of ${p.totalBytes} bytes)` : '(empty)')}`, ''];
  const redacted = p.redacted ? ` (redacted: ${p.redactedPointers.map(safe).join(', ')})` : '';
  const note = dim(`${p.truncated ? ` (truncated: ${p.totalBytes} bytes in all)` : ''}${redacted}`);
  const split = ctx.afterExit === null || ctx.afterExit === undefined ? null : splitAt(p, ctx.afterExit);
  // Where the marker cannot go in the text (not UTF-8 there, or redaction moved the bytes), the header says where.
  const afterNote = ctx.afterExit !== null && ctx.afterExit !== undefined && split === null ? dim(` (from byte ${ctx.afterExit}: written after the plugin exited)`) : '';
  let body: string;
  if (p.text === null) body = dim(`(${p.bytes} bytes, not UTF-8: cnirec show ${id} --raw ${name} > ${name}.bin)`);
  else if (split) body = [split[0] === '' ? null : safeBlock(split[0].replace(/\n$/, '')), yellow(`── written after the plugin exited, from byte ${ctx.afterExit} ──`), safeBlock(split[1].trimEnd())].filter((l) => l !== null).join('\n');
  else body = safeBlock(p.text.trimEnd());
  return [`${bold(name)}  ${dim(`${p.bytes} bytes`)}${note}${afterNote}`, body, ''];
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The text before and from byte `offset`, when both halves are whole UTF-8 and the bytes are the ones written. */
function splitAt(p: Payload, offset: number): [string, string] | null {
  if (p.text === null || p.redacted || offset < 0 || offset > p.bytes) return null;
  const bytes = Buffer.from(p.base64, 'base64');
  try {
    return [UTF8.decode(bytes.subarray(0, offset)), UTF8.decode(bytes.subarray(offset))];
  } catch {
    return null;
  }
}

export async function replayCommand(args: string[], client: ClientOptions): Promise<number> {
  const { positionals } = parseCommand(args, {}, REPLAY_USAGE, true);
  const id = onlyId(positionals, REPLAY_USAGE);
  const script = await getText(client, `/api/v1/calls/${encodeURIComponent(id)}/replay`);
  const shown = neutralise(script, { multiline: true });
  if (process.stdout.isTTY && shown !== script) {
    // On a terminal the script is read, not run: recorded values in it are shown escaped. Redirected, it is exact.
    stdout.raw(shown);
    stderr.line(yellow('(control characters are shown escaped on a terminal: redirect to a file for the exact script)'));
  } else {
    stdout.raw(script);
  }
  return 0;
}

function onlyId(positionals: string[], usage: string): string {
  if (positionals.length === 0) throw new UsageError('which call? give its id (cnirec calls lists them)', usage);
  if (positionals.length > 1) throw new UsageError(`one call id, not ${positionals.length}`, usage);
  return positionals[0]!;
}

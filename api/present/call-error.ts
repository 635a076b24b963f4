/**
 * What a failed call said about its failure, in one line for its summary:
 * the CNI error's `msg` (and `details`) from stdout, as libcni reports it;
 * else the first line of a stdout that is not JSON, else the first line of
 * stderr (a panicking plugin prints nothing else: "netplugin failed with no
 * error message"). The same for live calls (the tail) and stored ones.
 */

import type { CallStore, FailureText, StoredCallSummary } from '../../store/index.js';
import type { CallSummary } from '../schemas/call-summary.js';
import { summaryFromStored } from './call-summary.js';

/** A line, not a page: the call's own view has the whole error. */
const MAX_CHARS = 300;

export function failureMessage(f: FailureText): string | null {
  if (f.msg !== null && f.msg.trim() !== '') return clip(f.details ? `${f.msg.trim()}: ${f.details.trim()}` : f.msg.trim());
  const stdout = f.stdoutHead.toString('utf8').trim();
  if (stdout !== '' && !stdout.startsWith('{') && !stdout.startsWith('[')) return clip(firstLine(stdout));
  const stderr = f.stderrHead.toString('utf8').trim();
  return stderr === '' ? null : clip(firstLine(stderr));
}

/** From a call's whole streams (a live call, or one read in full). */
export function failureFromStreams(stdout: Buffer, stderr: Buffer): string | null {
  let msg: string | null = null;
  let details: string | null = null;
  if (stdout.length > 0 && stdout[0] === 0x7b) {
    try {
      const parsed = JSON.parse(stdout.toString('utf8')) as { msg?: unknown; details?: unknown };
      if (typeof parsed.msg === 'string') msg = parsed.msg;
      if (typeof parsed.details === 'string') details = parsed.details;
    } catch {
      // Not a CNI error: the first line of the text says what there is.
    }
  }
  return failureMessage({ msg, details, stdoutHead: stdout.subarray(0, 2048), stderrHead: stderr.subarray(0, 2048) });
}

/** Stored summaries with their failures' messages, read in one query for the failed ones. */
export function presentStoredSummaries(rows: readonly StoredCallSummary[], store: Pick<CallStore, 'failureTexts'>): CallSummary[] {
  const failed = rows.filter((r) => r.ok === false).map((r) => r.id);
  const texts = failed.length === 0 ? null : store.failureTexts(failed);
  return rows.map((r) => {
    const t = texts?.get(r.id);
    return summaryFromStored(r, t === undefined ? null : failureMessage(t));
  });
}

function firstLine(text: string): string {
  return text.split('\n').find((l) => l.trim() !== '')!.trim();
}

function clip(text: string): string {
  return text.length > MAX_CHARS ? `${text.slice(0, MAX_CHARS)}…` : text;
}

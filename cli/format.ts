/**
 * How calls look on a terminal: one line a call, in columns. Recorded text
 * (pod names, plugin names, errors) is neutralised as each field is made,
 * so columns are measured on what is printed; the output writer does it
 * again for the whole line (output.ts). What went wrong is on the line: a
 * failed call's error, an incomplete call's reason, records the tracer lost.
 */

import type { CallSummary } from '../api/index.js';
import { bold, clip, dim, green, padEnd, padStart, red, yellow } from './output.js';
import { safe } from './terminal-text.js';
import { ageOf, durationText } from './time-text.js';

export { durationText } from './time-text.js';

export type TimeStyle = 'age' | 'absolute';

export interface CallLineOptions {
  /** Where the time column shows an age (`12s`) or the time itself (ISO 8601, UTC). */
  readonly time: TimeStyle;
  /** Said already (a pod's story): not on every line. */
  readonly showPod?: boolean;
  /** Before the command: a tree's depth. */
  readonly indent?: string;
  readonly nowMs?: number;
  /** How much of an error to show (the call's own page has all of it). */
  readonly errorWidth?: number;
  /** Also who ran it and the container (-o wide). */
  readonly wide?: boolean;
  /** What went wrong, at the end of the line (default); a call's own page says it below instead. */
  readonly notes?: boolean;
}

type Outcome = Pick<CallSummary, 'status' | 'exitCode' | 'signal'>;

export function outcomeText(c: Outcome): string {
  if (c.status === 'running') return yellow('running');
  if (c.status === 'incomplete') return yellow('incomplete');
  if (c.signal !== null) return red(`signal ${c.signal}`);
  return c.exitCode === 0 ? green('exit 0') : red(`exit ${c.exitCode ?? '?'}`);
}

/** What went wrong with the call, for the end of its line; '' when nothing did. */
export function callNotes(c: Pick<CallSummary, 'error' | 'status' | 'incompleteReason' | 'lostRecords' | 'ok' | 'captureMode'>, errorWidth = 120): string {
  const notes: string[] = [];
  // In light mode its output was not captured: the message may well exist (a STATUS's next check, with payloads, has it).
  const noMessage = c.captureMode === 'light' ? 'failed; its output was not captured (light capture)' : 'failed without an error message';
  if (c.ok === false) notes.push(red(c.error ? `error: ${clip(safe(c.error), errorWidth)}` : noMessage));
  if (c.status === 'incomplete') notes.push(yellow(`incomplete: ${safe(c.incompleteReason ?? 'reason unknown')}`));
  if (c.lostRecords) notes.push(yellow('the tracer lost records during this call: parts may be missing'));
  return notes.join('  ');
}

const TIME_WIDTH = { age: 6, absolute: 24 } as const;

/** The header row of a list of call lines made with the same options. */
export function callHeader(opts: CallLineOptions): string {
  const cells = [padEnd(opts.time === 'age' ? 'AGE' : 'STARTED (UTC)', TIME_WIDTH[opts.time]), padEnd('COMMAND', 7), padEnd('PLUGIN', 12), padEnd('OUTCOME', 10), padStart('DURATION', 9)];
  if (opts.showPod !== false) cells.push(padEnd('POD', 24));
  cells.push(padEnd('ID', 17));
  if (opts.wide) cells.push(padEnd('CALLER', 12), padEnd('CONTAINER', 12));
  return bold([...cells, 'NOTES'].join('  '));
}

/** One call. A running call shows how long it has run so far (`12.50s+`): a hung plugin stands out. */
export function callLine(c: CallSummary, opts: CallLineOptions): string {
  const nowMs = opts.nowMs ?? Date.now();
  const time = opts.time === 'age' ? ageOf(c.startedAt, nowMs) : c.startedAt;
  const duration = c.status === 'running' ? `${durationText(Math.max(0, nowMs - Date.parse(c.startedAt)))}+` : durationText(c.durationMs);
  const cells = [
    dim(padEnd(time, TIME_WIDTH[opts.time])),
    bold(padEnd(`${opts.indent ?? ''}${safe(c.command ?? '?')}`, 7)),
    padEnd(safe(c.plugin), 12),
    padEnd(outcomeText(c), 10),
    padStart(duration, 9),
  ];
  if (opts.showPod !== false) cells.push(padEnd(podText(c), 24));
  const notes = opts.notes === false ? '' : callNotes(c, opts.errorWidth);
  const more = opts.wide === true || notes !== '';
  cells.push(dim(more ? padEnd(c.id, 17) : c.id));
  if (opts.wide) cells.push(padEnd(safe(c.parentProcess?.comm ?? (c.parentId ? '(delegated)' : '-')), 12), padEnd(c.containerId ? safe(c.containerId.slice(0, 12)) : '-', 12));
  return `${cells.join('  ')}${notes ? `  ${notes}` : ''}`;
}

/**
 * `namespace/name`, or the container's short id for a call without a pod, or the network for a call
 * about no container (STATUS, GC: libcni leaves CNI_CONTAINERID empty).
 */
export function podText(c: Pick<CallSummary, 'pod' | 'containerId' | 'network'>): string {
  if (c.pod) return safe(`${c.pod.namespace}/${c.pod.name}`);
  if (c.containerId) return `ctr ${safe(c.containerId.slice(0, 12))}`;
  return c.network ? `net ${safe(c.network)}` : '-';
}

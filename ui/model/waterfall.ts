/**
 * The pod story's waterfall: every call and helper a row, nested under the call that made it, placed on
 * one time axis shared by all the pod's sandboxes (as Jaeger draws a trace). Pure: `nowMs` ends the bars
 * of calls still running.
 */

import type { CallTree, HelperSummary, PodStory } from '../client/types.js';
import { outcomeOf, type Outcome } from './format.js';

export interface WaterfallRow {
  readonly key: string;
  readonly depth: number;
  readonly kind: 'call' | 'helper';
  /** The call to open (a helper: the call that ran it). */
  readonly callId: string;
  readonly label: string;
  readonly detail: string;
  readonly startedAt: string;
  readonly durationMs: number | null;
  readonly outcome: Outcome;
  /** Where the bar starts and how wide it is, in percent of the axis. */
  readonly leftPct: number;
  readonly widthPct: number;
  readonly lostRecords: boolean;
  /** What a call changed in the kernel in a few words (`+3 links, +2 addrs; 1 refused`); null for helpers and light calls. */
  readonly changes: string | null;
}

export interface WaterfallSandbox {
  readonly containerId: string | null;
  readonly podUid: string | null;
  readonly rows: readonly WaterfallRow[];
}

export interface Waterfall {
  readonly startMs: number;
  readonly endMs: number;
  readonly sandboxes: readonly WaterfallSandbox[];
}

/** A bar never thinner than this, so a 0.1 ms helper can still be seen and hovered. */
const MIN_WIDTH_PCT = 0.4;

interface Run {
  readonly startedAt: string;
  readonly endedAt: string | null;
  readonly durationMs: number | null;
}

const startOf = (run: Run) => Date.parse(run.startedAt);
function endOf(run: Run, nowMs: number): number {
  if (run.durationMs !== null) return startOf(run) + run.durationMs;
  if (run.endedAt !== null) return Date.parse(run.endedAt);
  return Math.max(nowMs, startOf(run));
}

function* runsOf(calls: readonly CallTree[]): Generator<Run> {
  for (const call of calls) {
    yield call;
    yield* call.helpers;
    yield* runsOf(call.children);
  }
}

export function layoutWaterfall(story: PodStory, nowMs: number): Waterfall {
  let startMs = Infinity;
  let endMs = -Infinity;
  for (const sandbox of story.sandboxes)
    for (const run of runsOf(sandbox.calls)) {
      startMs = Math.min(startMs, startOf(run));
      endMs = Math.max(endMs, endOf(run, nowMs));
    }
  if (!Number.isFinite(startMs)) return { startMs: 0, endMs: 0, sandboxes: [] };
  // A story of one instant still needs an axis.
  const span = Math.max(endMs - startMs, 1);
  const place = (run: Run) => {
    const left = ((startOf(run) - startMs) / span) * 100;
    const width = Math.max(((endOf(run, nowMs) - startOf(run)) / span) * 100, MIN_WIDTH_PCT);
    return { leftPct: Math.min(left, 100 - MIN_WIDTH_PCT), widthPct: Math.min(width, 100 - Math.min(left, 100 - MIN_WIDTH_PCT)) };
  };

  const sandboxes = story.sandboxes.map((sandbox) => {
    const rows: WaterfallRow[] = [];
    const addHelper = (helper: HelperSummary, call: CallTree, depth: number) =>
      rows.push({
        key: `${call.id}/h${helper.seq}`,
        depth,
        kind: 'helper',
        callId: call.id,
        label: helper.path.split('/').pop() || helper.path,
        detail: helper.argv.join(' '),
        startedAt: helper.startedAt,
        durationMs: helper.durationMs,
        outcome: outcomeOf(helper),
        lostRecords: false,
        changes: null,
        ...place(helper),
      });
    const addCall = (call: CallTree, depth: number) => {
      rows.push({
        key: call.id,
        depth,
        kind: 'call',
        callId: call.id,
        label: `${call.command ?? '?'} ${call.plugin}`,
        detail: call.error ?? (call.ifname ? `ifname ${call.ifname}` : ''),
        startedAt: call.startedAt,
        durationMs: call.durationMs,
        outcome: outcomeOf(call),
        lostRecords: call.lostRecords,
        changes: call.changeSummary === 'no changes' ? null : call.changeSummary,
        ...place(call),
      });
      // Helpers and delegated calls in the order they started, as the plugin ran them.
      const nested = [
        ...call.helpers.map((h) => ({ at: startOf(h), add: () => addHelper(h, call, depth + 1) })),
        ...call.children.map((c) => ({ at: startOf(c), add: () => addCall(c, depth + 1) })),
      ].sort((a, b) => a.at - b.at);
      for (const n of nested) n.add();
    };
    for (const call of sandbox.calls) addCall(call, 0);
    return { containerId: sandbox.containerId, podUid: sandbox.podUid, rows };
  });
  return { startMs, endMs: startMs + span, sandboxes };
}

/** Tick labels for the axis: `count` evenly spaced offsets in ms from its start. */
export function axisTicks(waterfall: Waterfall, count = 5): { readonly pct: number; readonly ms: number }[] {
  const span = waterfall.endMs - waterfall.startMs;
  return Array.from({ length: count + 1 }, (_, i) => ({ pct: (i / count) * 100, ms: (span * i) / count }));
}

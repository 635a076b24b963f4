/**
 * When a call whose plugin ended may finish (its call.finished event), and
 * in what order. Pure: the assembler's state of the calls, the time, and
 * what the assembler knows is still outstanding for each.
 */

import { markLost, type CallState } from './call-state.js';
import { BUFFER_READ_LATE_US } from '../tracer/reorder-window.js';

/**
 * How long past its exit (and grace) a call waits for payload records its
 * processes' exits announced (see IoTally) before it is published without
 * them, marked lostRecords.
 */
const IO_WAIT_MS = 10_000;
/**
 * How long past its exit (and grace) a call waits for the exits of descendants
 * not seen to end: as long as a CPU buffer may be read late.
 */
const DESCENDANT_EXIT_WAIT_MS = BUFFER_READ_LATE_US / 1000;

/** What the assembler knows a call still waits for. */
export interface KnownWaits {
  /** A process of the call exited with payload records announced that have not all come. */
  missingIo(call: CallState): boolean;
  /** A helper or fork of the call has not been seen to end. */
  hasLiveDescendant(id: string, call: CallState): boolean;
  /**
   * Records dated before its exit are still held before the assembler (in
   * order, or being put together): its exit came ahead of them (another CPU's
   * buffer read first, the exit kept until its process was known).
   */
  recordsHeld(call: CallState): boolean;
}

/**
 * The calls to publish now, delegates before the plugin that ran them. A
 * call is published once its exit has come (plus the grace, 0 by default)
 * and nothing it is known to wait for is outstanding: the payload records
 * its processes' exits announced (see IoTally; after IO_WAIT_MS it goes
 * without them, marked lostRecords), the exits of its descendants and of
 * its delegates' calls, which may still be in another CPU's buffer (after
 * DESCENDANT_EXIT_WAIT_MS it goes without them: a descendant that really
 * runs on is a lingering one). A call waiting blocks the plugin that ran
 * it, so no reader sees a finished call whose delegate still looks running.
 */
export function finishOrder(calls: ReadonlyMap<string, CallState>, nowMs: number, known: KnownWaits): string[] {
  const openChildren = new Set<string>();
  for (const call of calls.values()) if (call.endedAtUs === null && call.base.parentId !== null) openChildren.add(call.base.parentId);
  const ready = new Set<string>();
  const blocked = new Set<string>();
  for (const [id, call] of calls) {
    const waitingMs = call.finalizeDueMs === null ? null : nowMs - call.finalizeDueMs;
    if (waitingMs === null || waitingMs < 0) {
      if (call.endedAtUs !== null && call.base.parentId !== null) blocked.add(call.base.parentId);
      continue;
    }
    if (waitsFor(id, call, waitingMs, openChildren, known)) {
      if (call.base.parentId !== null) blocked.add(call.base.parentId);
      continue;
    }
    ready.add(id);
  }
  // A blocked call blocks its own plugin in turn.
  for (let changed = true; changed; ) {
    changed = false;
    for (const id of blocked) {
      const parentId = calls.get(id)?.base.parentId;
      if (ready.delete(id)) changed = true;
      if (parentId != null && !blocked.has(parentId)) {
        blocked.add(parentId);
        changed = true;
      }
    }
  }
  const readyChildren = new Map<string, string[]>();
  for (const id of ready) {
    const parentId = calls.get(id)!.base.parentId;
    if (parentId !== null && ready.has(parentId)) readyChildren.set(parentId, [...(readyChildren.get(parentId) ?? []), id]);
  }
  const order: string[] = [];
  const placed = new Set<string>();
  const place = (id: string): void => {
    if (placed.has(id)) return;
    placed.add(id);
    for (const childId of readyChildren.get(id) ?? []) place(childId);
    order.push(id);
  };
  for (const id of ready) place(id);
  return order;
}

/** Whether a call whose exit came `waitingMs` ago still waits for something known to be on its way. */
function waitsFor(id: string, call: CallState, waitingMs: number, openChildren: ReadonlySet<string>, known: KnownWaits): boolean {
  // What the stream holds from before its exit goes in before it is published, lost records or not.
  if (known.recordsHeld(call)) return true;
  if (call.lostRecords) return false;
  if (known.missingIo(call)) {
    // Payload records its exits announced are still on their way (a CPU buffer bpftrace drains late).
    if (waitingMs < IO_WAIT_MS) return true;
    markLost(call, 'payloads-never-came');
    return false;
  }
  // A helper or delegate whose exit has not come may have ended already, its exit (and the count of its
  // writes to the call's stdout) still in another CPU's buffer: it gets a moment.
  return waitingMs < DESCENDANT_EXIT_WAIT_MS && (openChildren.has(id) || known.hasLiveDescendant(id, call));
}

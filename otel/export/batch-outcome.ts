/**
 * What the collector's answers to one batch mean for the outbox, per signal.
 * Pure, so the rules are tested alone:
 * - accepted: that signal's watermark moves past the batch;
 * - refused for good (HTTP 400, or 413 for a single entry): sending it again
 *   cannot help, so it moves on too, and the batch is counted as rejected,
 *   or it would block everything behind it;
 * - 413 for several entries: the batch is halved and sent again at once;
 * - anything else (unreachable, 5xx, 401…): kept, and retried after backoff.
 */

import type { ExportSignal } from '../../store/index.js';
import type { SendResult } from './sdk-senders.js';

export interface BatchOutcome {
  /** Signals whose watermark moves past the batch. */
  readonly done: ExportSignal[];
  /** Signals the collector refused the batch for, with its answer. */
  readonly rejected: { readonly signal: ExportSignal; readonly error: string }[];
  /** Send fewer entries at a time: the collector found the request too large. */
  readonly shrink: boolean;
  /** Why to retry after backoff; null when nothing waits for a retry. */
  readonly retryError: string | null;
}

export function batchOutcome(results: Readonly<Record<ExportSignal, SendResult>>, entryCount: number): BatchOutcome {
  const outcome: { done: ExportSignal[]; rejected: { signal: ExportSignal; error: string }[]; shrink: boolean; retryError: string | null } = {
    done: [],
    rejected: [],
    shrink: false,
    retryError: null,
  };
  for (const signal of ['traces', 'logs'] as const) {
    const r = results[signal];
    if (r.ok) {
      outcome.done.push(signal);
    } else if (r.rejected === 'bad-request' || (r.rejected === 'too-large' && entryCount <= 1)) {
      outcome.done.push(signal);
      outcome.rejected.push({ signal, error: r.error });
    } else if (r.rejected === 'too-large') {
      outcome.shrink = true;
    } else {
      outcome.retryError ??= r.error;
    }
  }
  return outcome;
}

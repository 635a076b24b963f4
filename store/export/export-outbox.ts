/**
 * The export outbox's store side (see export-schema.ts for why an outbox):
 * the daemon turns queueing on, the OpenTelemetry exporter reads entries
 * after its watermarks and moves them on once the collector has them. Every
 * method is a short statement or transaction on the daemon's own connection,
 * so the exporter never holds the write lock for long.
 */

import type { Database } from 'better-sqlite3';
import { toStoreError } from '../db/index.js';
import { EXPORT_TRIGGERS } from '../db/index.js';

export const EXPORT_SIGNALS = ['traces', 'logs'] as const;
export type ExportSignal = (typeof EXPORT_SIGNALS)[number];
/** 'call-updated': a call already queued as 'call' changed since (late output, late helpers). */
export type OutboxKind = 'call' | 'call-updated' | 'tracer-event' | 'finding-opened' | 'finding-resolved';

export interface OutboxEntry {
  readonly seq: number;
  readonly kind: OutboxKind;
  /** The id of the call, tracer event or finding. */
  readonly ref: string;
  readonly queuedUs: number;
}

export type Watermarks = Readonly<Record<ExportSignal, number>>;

export interface OutboxBounds {
  /** Entries waiting beyond this many: the oldest are skipped. */
  readonly maxEntries: number;
  /** Entries queued before this (µs since the epoch) are skipped. */
  readonly minQueuedUs: number;
}

export interface ExportOutbox {
  /** From now on, what finishes on this connection is queued (idempotent). */
  startQueueing(): void;
  stopQueueing(): void;
  watermarks(): Watermarks;
  /** Up to `limit` entries after `afterSeq`, oldest first. */
  entriesAfter(afterSeq: number, limit: number): OutboxEntry[];
  /** Moves watermarks forward (never back), then deletes what every signal is past; one transaction. */
  advance(to: Partial<Record<ExportSignal, number>>): void;
  /** Entries after a signal's watermark. */
  waiting(signal: ExportSignal): number;
  /** Skips what is beyond the bounds, oldest first, by moving the watermarks past it; returns how many each signal skipped. */
  trim(bounds: OutboxBounds): Record<ExportSignal, number>;
}

export function createExportOutbox(db: Database): ExportOutbox {
  const file = db.name;
  const readMarks = db.prepare<[], { signal: ExportSignal; watermark: number }>('SELECT signal, watermark FROM otel_watermarks');
  const after = db.prepare<[number, number], { seq: number; kind: OutboxKind; ref: string; queued_us: number }>(
    'SELECT seq, kind, ref, queued_us FROM otel_outbox WHERE seq > ? ORDER BY seq LIMIT ?',
  );
  const setMark = db.prepare<[number, ExportSignal]>('UPDATE otel_watermarks SET watermark = max(watermark, ?) WHERE signal = ?');
  const prune = db.prepare('DELETE FROM otel_outbox WHERE seq <= (SELECT min(watermark) FROM otel_watermarks)');
  const countAfter = db.prepare<[number], { n: number }>('SELECT count(*) AS n FROM otel_outbox WHERE seq > ?');
  const countBetween = db.prepare<[number, number], { n: number }>('SELECT count(*) AS n FROM otel_outbox WHERE seq > ? AND seq <= ?');
  const lastSeq = db.prepare<[], { s: number | null }>('SELECT max(seq) AS s FROM otel_outbox');
  const oldestAfter = db.prepare<[number], { queued_us: number }>('SELECT queued_us FROM otel_outbox WHERE seq > ? ORDER BY seq LIMIT 1');
  const lastQueuedBefore = db.prepare<[number, number], { s: number | null }>('SELECT max(seq) AS s FROM otel_outbox WHERE seq > ? AND queued_us < ?');

  const watermarks = (): Watermarks => {
    const marks: Record<ExportSignal, number> = { traces: 0, logs: 0 };
    for (const r of readMarks.all()) marks[r.signal] = r.watermark;
    return marks;
  };

  const advanceTx = db.transaction((to: Partial<Record<ExportSignal, number>>) => {
    for (const signal of EXPORT_SIGNALS) {
      const seq = to[signal];
      if (seq !== undefined) setMark.run(seq, signal);
    }
    prune.run();
  });

  const trimTx = db.transaction((bounds: OutboxBounds) => {
    const marks = watermarks();
    const low = Math.min(marks.traces, marks.logs);
    let cutoff = 0;
    const last = lastSeq.get()?.s ?? 0;
    if (countAfter.get(low)!.n > bounds.maxEntries) cutoff = last - bounds.maxEntries;
    const oldest = oldestAfter.get(low);
    if (oldest !== undefined && oldest.queued_us < bounds.minQueuedUs) cutoff = Math.max(cutoff, lastQueuedBefore.get(low, bounds.minQueuedUs)?.s ?? 0);
    const skipped: Record<ExportSignal, number> = { traces: 0, logs: 0 };
    if (cutoff <= low) return skipped;
    for (const signal of EXPORT_SIGNALS) {
      if (cutoff <= marks[signal]) continue;
      skipped[signal] = countBetween.get(marks[signal], cutoff)!.n;
      setMark.run(cutoff, signal);
    }
    prune.run();
    return skipped;
  });

  const guarded = <T>(what: string, fn: () => T): T => {
    try {
      return fn();
    } catch (err) {
      throw toStoreError(err, file, what);
    }
  };

  return {
    startQueueing: () => guarded('prepare the export outbox in', () => EXPORT_TRIGGERS.forEach((t) => db.exec(t.sql))),
    stopQueueing: () => guarded('update', () => EXPORT_TRIGGERS.forEach((t) => db.exec(`DROP TRIGGER IF EXISTS temp.${t.name}`))),
    watermarks: () => guarded('read', watermarks),
    entriesAfter: (afterSeq, limit) =>
      guarded('read', () => after.all(afterSeq, limit).map((r) => ({ seq: r.seq, kind: r.kind, ref: r.ref, queuedUs: r.queued_us }))),
    advance: (to) => guarded('update the export watermarks in', () => advanceTx(to)),
    waiting: (signal) => guarded('read', () => countAfter.get(watermarks()[signal])!.n),
    trim: (bounds) => guarded('update the export watermarks in', () => trimTx(bounds)),
  };
}

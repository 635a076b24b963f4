/**
 * Tables behind the OpenTelemetry export: an outbox of what finished, in the
 * order it finished, and one watermark per signal. Kept out of migrations.ts
 * so that file stays a list; these statements must never change once
 * shipped: a later change is a new migration.
 *
 * Why an outbox and not a cursor over `calls`: a call's rowid is taken when
 * it starts, not when it finishes, and retention may delete the newest rowid
 * (SQLite then hands it out again), so no order over `calls` itself says
 * "everything up to here has been exported". The outbox's AUTOINCREMENT
 * sequence never goes back, even when every row is deleted, so a watermark
 * on it is exact: what is above it waits, what is at or below it is done.
 */

export const CREATE_EXPORT_OUTBOX = `
CREATE TABLE otel_outbox (
  seq      INTEGER PRIMARY KEY AUTOINCREMENT,
  -- 'call': calls.id; 'tracer-event': tracer_events.id; 'finding-opened' / 'finding-resolved': cache_findings.id.
  kind     TEXT NOT NULL CHECK (kind IN ('call', 'tracer-event', 'finding-opened', 'finding-resolved')),
  ref      TEXT NOT NULL,
  -- When it was queued (µs since the epoch): the backlog's age limit is measured from here.
  queued_us INTEGER NOT NULL
) STRICT`;

/**
 * Migration 11: the outbox also takes 'call-updated' (a call that changed
 * after it was queued: its late output goes as a log record linked to the
 * span already sent). SQLite cannot change a CHECK in place, so the table is
 * rebuilt; its AUTOINCREMENT high-water mark (sqlite_sequence) is carried
 * over even when the table is empty, or new entries would get numbers at or
 * below the watermarks and never be sent. ALTER TABLE RENAME renames the
 * sqlite_sequence row with the table.
 */
export const REBUILD_EXPORT_OUTBOX_V12 = [
  `CREATE TABLE otel_outbox_v11 (
  seq      INTEGER PRIMARY KEY AUTOINCREMENT,
  -- 'call' / 'call-updated': calls.id; 'tracer-event': tracer_events.id; 'finding-opened' / 'finding-resolved': cache_findings.id.
  kind     TEXT NOT NULL CHECK (kind IN ('call', 'call-updated', 'tracer-event', 'finding-opened', 'finding-resolved')),
  ref      TEXT NOT NULL,
  queued_us INTEGER NOT NULL
) STRICT`,
  'INSERT INTO otel_outbox_v11 (seq, kind, ref, queued_us) SELECT seq, kind, ref, queued_us FROM otel_outbox',
  "DELETE FROM sqlite_sequence WHERE name = 'otel_outbox_v11'",
  "INSERT INTO sqlite_sequence (name, seq) SELECT 'otel_outbox_v11', seq FROM sqlite_sequence WHERE name = 'otel_outbox'",
  'DROP TABLE otel_outbox',
  'ALTER TABLE otel_outbox_v11 RENAME TO otel_outbox',
];

/**
 * Migration 11: one row each time a call changed after it was first stored
 * finished (the collector's `call.updated`: descendants that outlived the
 * plugin wrote or ended later). The export queues each one while it is on.
 */
export const CREATE_CALL_UPDATES = `
CREATE TABLE call_updates (
  id      INTEGER PRIMARY KEY,
  call_id TEXT NOT NULL REFERENCES calls (id) ON DELETE CASCADE,
  at_us   INTEGER NOT NULL
) STRICT`;
// Also serves the FK check behind ON DELETE CASCADE.
export const CREATE_CALL_UPDATES_INDEX = 'CREATE INDEX call_updates_by_call ON call_updates (call_id)';

/** One row per signal: every outbox row with seq <= watermark was sent (or skipped, and counted). */
export const CREATE_EXPORT_WATERMARKS = `
CREATE TABLE otel_watermarks (
  signal    TEXT PRIMARY KEY NOT NULL CHECK (signal IN ('traces', 'logs')),
  watermark INTEGER NOT NULL
) STRICT`;

const NOW_US = "CAST(unixepoch('subsec') * 1000000 AS INTEGER)";

/**
 * Fill the outbox in the same transaction as the write it reports, so a crash
 * can never store a call without queueing it (or the reverse). TEMP triggers
 * live only on the daemon's own connection and only while export is on: with
 * export off, recording pays nothing, and nothing piles up for later.
 *
 * A call is queued once, when it leaves `running` (finished, or marked
 * incomplete), or when it is first inserted already finished; a later
 * rewrite of a finished row (a retried batch) does not queue it again. A
 * change after that (a row in call_updates) is queued as 'call-updated'.
 */
export const EXPORT_TRIGGERS: readonly { readonly name: string; readonly sql: string }[] = [
  {
    name: 'otel_call_finished',
    sql: `CREATE TEMP TRIGGER IF NOT EXISTS otel_call_finished AFTER UPDATE OF status ON main.calls
      WHEN OLD.status = 'running' AND NEW.status <> 'running'
      BEGIN INSERT INTO otel_outbox (kind, ref, queued_us) VALUES ('call', NEW.id, ${NOW_US}); END`,
  },
  {
    name: 'otel_call_inserted_finished',
    sql: `CREATE TEMP TRIGGER IF NOT EXISTS otel_call_inserted_finished AFTER INSERT ON main.calls
      WHEN NEW.status <> 'running'
      BEGIN INSERT INTO otel_outbox (kind, ref, queued_us) VALUES ('call', NEW.id, ${NOW_US}); END`,
  },
  {
    name: 'otel_call_updated',
    sql: `CREATE TEMP TRIGGER IF NOT EXISTS otel_call_updated AFTER INSERT ON main.call_updates
      BEGIN INSERT INTO otel_outbox (kind, ref, queued_us) VALUES ('call-updated', NEW.call_id, ${NOW_US}); END`,
  },
  {
    name: 'otel_tracer_event',
    sql: `CREATE TEMP TRIGGER IF NOT EXISTS otel_tracer_event AFTER INSERT ON main.tracer_events
      BEGIN INSERT INTO otel_outbox (kind, ref, queued_us) VALUES ('tracer-event', NEW.id, ${NOW_US}); END`,
  },
  {
    // An upsert that refreshes an open finding takes the UPDATE path: only a new finding fires this.
    name: 'otel_finding_opened',
    sql: `CREATE TEMP TRIGGER IF NOT EXISTS otel_finding_opened AFTER INSERT ON main.cache_findings
      BEGIN INSERT INTO otel_outbox (kind, ref, queued_us) VALUES ('finding-opened', NEW.id, ${NOW_US}); END`,
  },
  {
    name: 'otel_finding_resolved',
    sql: `CREATE TEMP TRIGGER IF NOT EXISTS otel_finding_resolved AFTER UPDATE OF resolved_at_ms ON main.cache_findings
      WHEN OLD.resolved_at_ms IS NULL AND NEW.resolved_at_ms IS NOT NULL
      BEGIN INSERT INTO otel_outbox (kind, ref, queued_us) VALUES ('finding-resolved', NEW.id, ${NOW_US}); END`,
  },
];

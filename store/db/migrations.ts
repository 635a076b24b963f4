/**
 * Versioned schema changes. `PRAGMA user_version` holds the last applied
 * version: it lives in the database header, so it commits or rolls back with
 * the migration's own transaction and a crash never leaves a half-migrated file.
 * Append new migrations; never edit one that has shipped.
 */

import type { Database } from 'better-sqlite3';
import { CREATE_CACHE_ENTRIES, CREATE_CACHE_FINDINGS, CREATE_CACHE_INDEXES, CREATE_IP_HISTORY } from './cache-schema.js';
import { StoreError } from './errors.js';
import { QUERY_INDEXES_V3 } from './query-indexes.js';
import { CREATE_CALL_BINARIES, CREATE_CONF_VERSIONS, CREATE_NODE_SETUP_INDEXES, CREATE_PLUGIN_BINARIES } from './node-setup-schema.js';
import { CREATE_CALL_UPDATES, CREATE_CALL_UPDATES_INDEX, CREATE_EXPORT_OUTBOX, CREATE_EXPORT_WATERMARKS, REBUILD_EXPORT_OUTBOX_V12 } from './export-schema.js';
import { CREATE_READINESS, CREATE_READINESS_TRANSITIONS } from './readiness-schema.js';
import { CREATE_RUNTIME_SANDBOXES, CREATE_RUNTIME_TRANSITIONS } from './runtime-schema.js';

export interface Migration {
  readonly version: number;
  readonly name: string;
  /**
   * false: `up` runs outside a transaction, for statements SQLite refuses
   * inside one (VACUUM). Such an `up` must be safe to run again, as a crash
   * before the version is recorded repeats it on the next start.
   */
  readonly transactional?: boolean;
  up(db: Database): void;
}

/** Marks the file as ours ("cnir"), so we never migrate someone else's SQLite file. */
export const APPLICATION_ID = 0x636e6972;

const CREATE_CALLS = `
CREATE TABLE calls (
  id                     TEXT PRIMARY KEY NOT NULL,
  status                 TEXT NOT NULL CHECK (status IN ('running', 'finished', 'incomplete')),
  incomplete_reason      TEXT,
  command                TEXT,
  plugin                 TEXT NOT NULL,
  path                   TEXT NOT NULL,
  pid                    INTEGER NOT NULL,
  ppid                   INTEGER NOT NULL,
  -- No foreign key: a delegated call must still be stored when its parent's
  -- row is missing (dropped while the disk was full, pruned by retention).
  parent_id              TEXT,
  parent_pid             INTEGER,
  parent_comm            TEXT,
  parent_exe             TEXT,
  container_id           TEXT,
  netns                  TEXT,
  ifname                 TEXT,
  cni_args               TEXT,
  pod_namespace          TEXT,
  pod_name               TEXT,
  pod_uid                TEXT,
  pod_infra_container_id TEXT,
  trace_parent           TEXT,
  is_version_probe       INTEGER NOT NULL CHECK (is_version_probe IN (0, 1)),
  started_at_us          INTEGER NOT NULL,
  ended_at_us            INTEGER,
  duration_us            INTEGER,
  exit_code              INTEGER,
  signal                 INTEGER,
  core_dumped            INTEGER,
  ok                     INTEGER,
  capture_mode           TEXT NOT NULL,
  lost_records           INTEGER NOT NULL,
  stdin_total            INTEGER NOT NULL,
  stdin_truncated        INTEGER NOT NULL,
  stdout_total           INTEGER NOT NULL,
  stdout_truncated       INTEGER NOT NULL,
  stderr_total           INTEGER NOT NULL,
  stderr_truncated       INTEGER NOT NULL,
  -- Variable-size columns last: SQLite reads a record front to back, so list
  -- queries get every scalar above without touching the payload's overflow pages.
  argv_json              TEXT NOT NULL,
  env_json               TEXT NOT NULL,
  stdin                  BLOB NOT NULL,
  stdout                 BLOB NOT NULL,
  stderr                 BLOB NOT NULL
) STRICT`;

const CREATE_HELPERS = `
CREATE TABLE helpers (
  id               INTEGER PRIMARY KEY,
  call_id          TEXT NOT NULL REFERENCES calls (id) ON DELETE CASCADE,
  seq              INTEGER NOT NULL,
  pid              INTEGER NOT NULL,
  ppid             INTEGER NOT NULL,
  path             TEXT NOT NULL,
  started_at_us    INTEGER NOT NULL,
  ended_at_us      INTEGER,
  exit_code        INTEGER,
  signal           INTEGER,
  core_dumped      INTEGER,
  stdout_total     INTEGER NOT NULL,
  stdout_truncated INTEGER NOT NULL,
  stderr_total     INTEGER NOT NULL,
  stderr_truncated INTEGER NOT NULL,
  argv_json        TEXT NOT NULL,
  stdout           BLOB NOT NULL,
  stderr           BLOB NOT NULL
) STRICT`;

const CREATE_TRACER_EVENTS = `
CREATE TABLE tracer_events (
  id          INTEGER PRIMARY KEY,
  at_us       INTEGER NOT NULL,
  kind        TEXT NOT NULL,
  detail_json TEXT NOT NULL
) STRICT`;

// Every list query orders by (started_at_us DESC, id DESC) for keyset
// pagination, so each filter index ends with those two columns: SQLite then
// walks the index in order and stops after `limit` rows instead of sorting.
const CREATE_INDEXES = [
  'CREATE INDEX calls_by_started ON calls (started_at_us DESC, id DESC)',
  'CREATE INDEX calls_by_pod ON calls (pod_namespace, pod_name, started_at_us DESC, id DESC)',
  'CREATE INDEX calls_by_pod_uid ON calls (pod_uid, started_at_us DESC, id DESC) WHERE pod_uid IS NOT NULL',
  'CREATE INDEX calls_by_container ON calls (container_id, started_at_us DESC, id DESC) WHERE container_id IS NOT NULL',
  'CREATE INDEX calls_by_command ON calls (command, started_at_us DESC, id DESC)',
  'CREATE INDEX calls_by_plugin ON calls (plugin, started_at_us DESC, id DESC)',
  // Partial: failures are the rows people look for and few of the total.
  'CREATE INDEX calls_failed ON calls (started_at_us DESC, id DESC) WHERE ok = 0',
  'CREATE INDEX calls_by_duration ON calls (duration_us) WHERE duration_us IS NOT NULL',
  'CREATE INDEX calls_by_parent ON calls (parent_id, started_at_us, id) WHERE parent_id IS NOT NULL',
  // Partial: only the handful of calls in flight, for the live view and the startup sweep.
  "CREATE INDEX calls_running ON calls (started_at_us DESC, id DESC) WHERE status = 'running'",
  // Also serves the FK check behind ON DELETE CASCADE.
  'CREATE INDEX helpers_by_call ON helpers (call_id, seq)',
  'CREATE INDEX tracer_events_by_time ON tracer_events (at_us DESC, id DESC)',
];

// Retention deletes closed history by when it closed (retention-prune.ts).
const CREATE_RETENTION_INDEXES = [
  'CREATE INDEX IF NOT EXISTS cache_entries_closed ON cache_entries (coalesce(superseded_at_ms, removed_at_ms)) WHERE superseded_at_ms IS NOT NULL OR removed_at_ms IS NOT NULL',
  'CREATE INDEX IF NOT EXISTS ip_history_closed ON ip_history (to_ms) WHERE to_ms IS NOT NULL',
];

/**
 * Retention hands deleted pages back to the disk with incremental vacuum,
 * which needs auto_vacuum=INCREMENTAL. New files get it before their first
 * table (open-database.ts); a file created without it can only switch
 * through a full VACUUM, which rewrites the file once (it needs free disk
 * about the file's size, and takes seconds per GiB) at this one start.
 */
function convertToIncrementalVacuum(db: Database): void {
  if ((db.pragma('auto_vacuum', { simple: true }) as number) === 2) return;
  db.pragma('auto_vacuum = INCREMENTAL');
  db.exec('VACUUM');
  // VACUUM wrote the whole file into the WAL: put it back and let the WAL go.
  db.pragma('wal_checkpoint(TRUNCATE)');
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'calls, helpers and tracer events',
    up(db) {
      db.exec(CREATE_CALLS);
      db.exec(CREATE_HELPERS);
      db.exec(CREATE_TRACER_EVENTS);
      for (const sql of CREATE_INDEXES) db.exec(sql);
      db.pragma(`application_id = ${APPLICATION_ID}`);
    },
  },
  {
    version: 2,
    name: 'libcni cache entries, IP history and findings',
    up(db) {
      db.exec(CREATE_CACHE_ENTRIES);
      db.exec(CREATE_IP_HISTORY);
      db.exec(CREATE_CACHE_FINDINGS);
      for (const sql of CREATE_CACHE_INDEXES) db.exec(sql);
    },
  },
  {
    version: 3,
    name: 'indexes for failed-by-command, namespace and plugin + duration lists',
    up(db) {
      for (const sql of QUERY_INDEXES_V3) db.exec(sql);
    },
  },
  {
    version: 4,
    name: 'retention: incremental auto-vacuum and indexes on closed history',
    transactional: false,
    up(db) {
      for (const sql of CREATE_RETENTION_INDEXES) db.exec(sql);
      convertToIncrementalVacuum(db);
    },
  },
  {
    version: 5,
    name: 'what redaction replaced in payloads and cache entries',
    up(db) {
      // JSON: {"stdin": [pointer…], …} per stream, or a pointer list for cache entries; NULL when nothing was
      // redacted. Appended after the blobs, which only the detail views read anyway.
      db.exec('ALTER TABLE calls ADD COLUMN redactions_json TEXT');
      db.exec('ALTER TABLE helpers ADD COLUMN redactions_json TEXT');
      db.exec('ALTER TABLE cache_entries ADD COLUMN redactions_json TEXT');
    },
  },
  {
    version: 6,
    name: 'the node\'s CNI setup: conf file versions, plugin binary versions and the binary each call ran',
    up(db) {
      db.exec(CREATE_CONF_VERSIONS);
      db.exec(CREATE_PLUGIN_BINARIES);
      db.exec(CREATE_CALL_BINARIES);
      for (const sql of CREATE_NODE_SETUP_INDEXES) db.exec(sql);
    },
  },
  {
    version: 7,
    name: 'findings name their pod and count',
    up(db) {
      // The pod a finding is about (from the calls or the cache entry) and a count where one means something
      // (a loop's failures), as fields a client can filter on and show rather than words inside the message.
      db.exec('ALTER TABLE cache_findings ADD COLUMN pod_namespace TEXT');
      db.exec('ALTER TABLE cache_findings ADD COLUMN pod_name TEXT');
      db.exec('ALTER TABLE cache_findings ADD COLUMN count INTEGER');
      db.exec('CREATE INDEX cache_findings_by_pod ON cache_findings (pod_namespace, pod_name) WHERE pod_name IS NOT NULL');
      // A finding's history (its occurrences), for the grouped lists.
      db.exec('CREATE INDEX cache_findings_by_subject ON cache_findings (kind, subject, last_seen_ms)');
    },
  },
  {
    version: 8,
    name: 'OpenTelemetry export: outbox and per-signal watermarks',
    up(db) {
      db.exec(CREATE_EXPORT_OUTBOX);
      db.exec(CREATE_EXPORT_WATERMARKS);
      db.exec("INSERT INTO otel_watermarks (signal, watermark) VALUES ('traces', 0), ('logs', 0)");
    },
  },
  {
    version: 9,
    name: 'exec chains, cut environments and paths, output written after the plugin exited',
    up(db) {
      // Older rows ran one image that the tracer did not say was cut: '[]' reads as "just the path".
      db.exec("ALTER TABLE calls ADD COLUMN exec_chain_json TEXT NOT NULL DEFAULT '[]'");
      db.exec('ALTER TABLE calls ADD COLUMN env_truncated INTEGER NOT NULL DEFAULT 0');
      db.exec('ALTER TABLE calls ADD COLUMN path_truncated INTEGER NOT NULL DEFAULT 0');
      db.exec('ALTER TABLE calls ADD COLUMN stdout_after_exit_offset INTEGER');
      db.exec('ALTER TABLE calls ADD COLUMN stderr_after_exit_offset INTEGER');
    },
  },
  {
    version: 10,
    name: 'calls say when stdout and stderr were one file, and how many reads/writes full mode did not take',
    up(db) {
      db.exec('ALTER TABLE calls ADD COLUMN stdio_shared INTEGER NOT NULL DEFAULT 0');
      db.exec('ALTER TABLE calls ADD COLUMN uncaptured_io INTEGER NOT NULL DEFAULT 0');
    },
  },
  {
    version: 11,
    name: 'calls name their network, GC-driven DELs are marked; CNI STATUS readiness per network and its transitions',
    up(db) {
      db.exec('ALTER TABLE calls ADD COLUMN gc_driven INTEGER NOT NULL DEFAULT 0');
      db.exec('ALTER TABLE calls ADD COLUMN network TEXT');
      // Older rows: the name their captured stdin gives (light-mode calls stay NULL).
      db.exec("UPDATE calls SET network = json_extract(CAST(stdin AS TEXT), '$.name') WHERE length(stdin) > 0 AND json_valid(CAST(stdin AS TEXT)) AND json_type(CAST(stdin AS TEXT), '$.name') = 'text'");
      db.exec('CREATE INDEX calls_by_network ON calls (network, started_at_us DESC, id DESC) WHERE network IS NOT NULL');
      db.exec(CREATE_READINESS);
      db.exec(CREATE_READINESS_TRANSITIONS);
      },
    },
    {
      version: 12,
    name: 'calls changed after they were stored finished, and their export',
    up(db) {
      db.exec(CREATE_CALL_UPDATES);
      db.exec(CREATE_CALL_UPDATES_INDEX);
      for (const sql of REBUILD_EXPORT_OUTBOX_V12) db.exec(sql);
    },
  },
  {
    version: 13,
    name: 'calls keep what they changed in the kernel and the kernel messages of their requests',
    up(db) {
      db.exec("ALTER TABLE calls ADD COLUMN changes_json TEXT NOT NULL DEFAULT 'null'");
      db.exec('ALTER TABLE calls ADD COLUMN change_summary TEXT');
      db.exec("ALTER TABLE calls ADD COLUMN kernel_messages_json TEXT NOT NULL DEFAULT '[]'");
    },
  },
  {
    version: 14,
    name: 'calls marked lostRecords keep why',
    up(db) {
      db.exec('ALTER TABLE calls ADD COLUMN lost_records_cause TEXT');
    },
  },
  {
    version: 15,
    name: 'retention deletes STATUS heartbeats before pod calls, and keeps a network\'s newest and the timeline\'s',
    up(db) {
      // Top-level STATUS calls per network, oldest first: the per-network cap counts and walks them
      // without reading the pod calls around them (retention-prune.ts). command and parent_id, constant
      // here, make it covering: SQLite does not count a partial index's WHERE columns as in it.
      db.exec("CREATE INDEX calls_status_by_network ON calls (network, started_at_us, id, command, parent_id) WHERE command = 'STATUS' AND parent_id IS NULL");
      // Whether a readiness transition links to a call, so retention keeps the timeline's calls longest.
      db.exec('CREATE INDEX cni_readiness_transitions_by_call ON cni_readiness_transitions (call_id) WHERE call_id IS NOT NULL');
    },
  },
  {
    version: 16,
    name: "the runtime's side: its conditions' transitions and the pod sandboxes it listed",
    up(db) {
      db.exec(CREATE_RUNTIME_TRANSITIONS);
      db.exec(CREATE_RUNTIME_SANDBOXES);
    },
  },
];

export function latestVersion(migrations: readonly Migration[] = MIGRATIONS): number {
  return migrations.reduce((max, m) => Math.max(max, m.version), 0);
}

/**
 * Refuses files that are SQLite but not ours, or ours but newer than this
 * build; then applies each missing migration in its own transaction.
 * Returns the versions applied (empty when the schema was current).
 */
export function migrate(db: Database, file: string, migrations: readonly Migration[] = MIGRATIONS): number[] {
  const current = db.pragma('user_version', { simple: true }) as number;
  const appId = db.pragma('application_id', { simple: true }) as number;
  const objects = (db.prepare('SELECT count(*) AS n FROM sqlite_schema').get() as { n: number }).n;
  if (appId !== APPLICATION_ID && (appId !== 0 || objects > 0)) {
    throw new StoreError('not-a-database', file, `The file ${file} is an SQLite database that cnirec did not create; move it away or choose another database path.`);
  }
  const latest = latestVersion(migrations);
  if (current > latest) {
    throw new StoreError(
      'schema-too-new',
      file,
      `The database ${file} was written by a newer cnirec (schema ${current}, this build knows ${latest}); upgrade cnirec or choose another database path.`,
    );
  }
  const applied: number[] = [];
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    if (m.version <= current) continue;
    if (m.transactional === false) {
      if ((db.pragma('user_version', { simple: true }) as number) >= m.version) continue;
      m.up(db);
      db.pragma(`user_version = ${m.version}`);
      applied.push(m.version);
      continue;
    }
    // IMMEDIATE takes the write lock first; re-reading the version under it
    // makes two daemons starting at once apply each migration only once.
    const ran = db
      .transaction(() => {
        if ((db.pragma('user_version', { simple: true }) as number) >= m.version) return false;
        m.up(db);
        db.pragma(`user_version = ${m.version}`);
        return true;
      })
      .immediate();
    if (ran) applied.push(m.version);
  }
  return applied;
}

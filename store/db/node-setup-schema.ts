/**
 * Tables for the node's CNI setup (the migration after the redaction
 * columns): every version of every conf dir file, every version of every
 * plugin binary a call ran, and which binary each call ran. Which conf
 * version a call ran with is not stored: it is derived by query, from the
 * network name in the call's stdin and the version's time span
 * (conf-history.ts). These statements never change once shipped.
 */

// One row per version of a conf file: a rewrite with other bytes closes the
// live row (superseded_at_ms = when the new version took effect) and opens a
// new one; a delete sets removed_at_ms.
export const CREATE_CONF_VERSIONS = `
CREATE TABLE conf_versions (
  id               INTEGER PRIMARY KEY,
  path             TEXT NOT NULL,
  dir              TEXT NOT NULL,
  kind             TEXT NOT NULL CHECK (kind IN ('file', 'symlink', 'other', 'too-large', 'unreadable')),
  sha256           TEXT,
  size_bytes       INTEGER NOT NULL,
  file_mtime_ms    INTEGER NOT NULL,
  -- When this version took effect: the file's mtime, or when it was first seen
  -- when the mtime is older than the previous version's (a copy keeping its mtime).
  valid_from_ms    INTEGER NOT NULL,
  first_seen_ms    INTEGER NOT NULL,
  superseded_at_ms INTEGER,
  removed_at_ms    INTEGER,
  network          TEXT,
  cni_version      TEXT,
  parse_error      TEXT,
  types_json       TEXT NOT NULL,
  link_target      TEXT,
  redactions_json  TEXT,
  -- After redaction: the original bytes are never stored.
  bytes            BLOB
) STRICT`;

export const CREATE_PLUGIN_BINARIES = `
CREATE TABLE plugin_binaries (
  id            INTEGER PRIMARY KEY,
  path          TEXT NOT NULL,
  dev           INTEGER NOT NULL,
  ino           INTEGER NOT NULL,
  size_bytes    INTEGER NOT NULL,
  mtime_ms      INTEGER NOT NULL,
  sha256        TEXT,
  problem       TEXT,
  first_seen_ms INTEGER NOT NULL,
  last_seen_ms  INTEGER NOT NULL
) STRICT`;

// No foreign keys: a link may be written before its call's row (the store writes
// behind), and a call may be dropped while the disk is full. Retention deletes
// links by start time, with the calls.
export const CREATE_CALL_BINARIES = `
CREATE TABLE call_binaries (
  call_id       TEXT PRIMARY KEY NOT NULL,
  binary_id     INTEGER NOT NULL,
  started_at_us INTEGER NOT NULL
) STRICT`;

export const CREATE_NODE_SETUP_INDEXES = [
  'CREATE UNIQUE INDEX conf_versions_live ON conf_versions (path) WHERE superseded_at_ms IS NULL AND removed_at_ms IS NULL',
  'CREATE INDEX conf_versions_by_path ON conf_versions (path, id)',
  'CREATE INDEX conf_versions_by_network ON conf_versions (network, valid_from_ms) WHERE network IS NOT NULL',
  'CREATE INDEX conf_versions_by_time ON conf_versions (valid_from_ms)',
  'CREATE INDEX conf_versions_closed ON conf_versions (coalesce(superseded_at_ms, removed_at_ms)) WHERE superseded_at_ms IS NOT NULL OR removed_at_ms IS NOT NULL',
  'CREATE UNIQUE INDEX plugin_binaries_version ON plugin_binaries (path, dev, ino, size_bytes, mtime_ms)',
  'CREATE INDEX plugin_binaries_by_seen ON plugin_binaries (last_seen_ms)',
  'CREATE INDEX call_binaries_by_binary ON call_binaries (binary_id, started_at_us)',
  'CREATE INDEX call_binaries_by_start ON call_binaries (started_at_us)',
];

/**
 * Tables for libcni's cached results, IP history and findings (migration 2).
 * Kept out of migrations.ts so that file stays a list; these statements must
 * never change once shipped: a later change is a new migration.
 */

// One row per version of a cache file: a rewrite with other bytes closes the
// live row (superseded_at_ms) and opens a new one, a delete sets removed_at_ms.
export const CREATE_CACHE_ENTRIES = `
CREATE TABLE cache_entries (
  id                   INTEGER PRIMARY KEY,
  path                 TEXT NOT NULL,
  dir                  TEXT NOT NULL,
  format               TEXT NOT NULL CHECK (format IN ('cniCacheV1', 'legacy')),
  container_id         TEXT,
  network_name         TEXT,
  if_name              TEXT,
  netns                TEXT,
  pod_namespace        TEXT,
  pod_name             TEXT,
  pod_uid              TEXT,
  digest               TEXT NOT NULL,
  file_mtime_ms        INTEGER NOT NULL,
  first_seen_ms        INTEGER NOT NULL,
  last_seen_ms         INTEGER NOT NULL,
  superseded_at_ms     INTEGER,
  removed_at_ms        INTEGER,
  -- No foreign keys: calls may be pruned, or never recorded (tracer down).
  add_call_id          TEXT,
  del_call_id          TEXT,
  config_problem       TEXT,
  ips_json             TEXT NOT NULL,
  cni_args_json        TEXT NOT NULL,
  capability_args_json TEXT,
  config_json          TEXT,
  result_json          TEXT
) STRICT`;

export const CREATE_IP_HISTORY = `
CREATE TABLE ip_history (
  id            INTEGER PRIMARY KEY,
  ip            TEXT NOT NULL,
  network       TEXT,
  container_id  TEXT,
  if_name       TEXT,
  pod_namespace TEXT,
  pod_name      TEXT,
  -- host-local: a reservation file; cache: an address in a cached result.
  source        TEXT NOT NULL CHECK (source IN ('host-local', 'cache')),
  path          TEXT NOT NULL,
  from_ms       INTEGER NOT NULL,
  to_ms         INTEGER
) STRICT`;

export const CREATE_CACHE_FINDINGS = `
CREATE TABLE cache_findings (
  id             INTEGER PRIMARY KEY,
  kind           TEXT NOT NULL,
  -- What the finding is about (a path, a call id): one open finding per kind and subject.
  subject        TEXT NOT NULL,
  message        TEXT NOT NULL,
  path           TEXT,
  container_id   TEXT,
  network        TEXT,
  ip             TEXT,
  call_id        TEXT,
  first_seen_ms  INTEGER NOT NULL,
  last_seen_ms   INTEGER NOT NULL,
  resolved_at_ms INTEGER
) STRICT`;

export const CREATE_CACHE_INDEXES = [
  // At most one live version per file: restarts and replays cannot duplicate it.
  'CREATE UNIQUE INDEX cache_entries_live ON cache_entries (path) WHERE superseded_at_ms IS NULL AND removed_at_ms IS NULL',
  'CREATE INDEX cache_entries_by_path ON cache_entries (path, id)',
  'CREATE INDEX cache_entries_by_container ON cache_entries (container_id, if_name) WHERE container_id IS NOT NULL',
  'CREATE INDEX cache_entries_by_network ON cache_entries (network_name, first_seen_ms)',
  'CREATE INDEX cache_entries_by_pod ON cache_entries (pod_namespace, pod_name) WHERE pod_name IS NOT NULL',
  'CREATE UNIQUE INDEX ip_history_open ON ip_history (source, path, ip) WHERE to_ms IS NULL',
  'CREATE INDEX ip_history_by_ip ON ip_history (ip, from_ms)',
  'CREATE INDEX ip_history_by_container ON ip_history (container_id) WHERE to_ms IS NULL',
  'CREATE UNIQUE INDEX cache_findings_open ON cache_findings (kind, subject) WHERE resolved_at_ms IS NULL',
  'CREATE INDEX cache_findings_by_time ON cache_findings (last_seen_ms DESC, id DESC)',
  // For linking entries to the ADD/DEL that made and removed them.
  "CREATE INDEX calls_top_level_by_container ON calls (container_id, ifname, command, ended_at_us) WHERE parent_id IS NULL AND container_id IS NOT NULL",
];

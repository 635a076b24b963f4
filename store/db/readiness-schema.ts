/**
 * Tables behind CNI STATUS readiness (schema version 11). Runtimes run
 * STATUS on every plugin of every 1.1.0 network every few seconds; a healthy
 * answer is folded into its (network, plugin) row (counts, a latency
 * histogram) instead of being stored as a call, and a change of answer is a
 * transition row. These statements never change once shipped.
 */

// One row per network and plugin asked. network '' when the network is not known.
export const CREATE_READINESS = `
CREATE TABLE cni_readiness (
  network          TEXT NOT NULL,
  plugin           TEXT NOT NULL,
  -- The last answer: 1 ready, 0 not ready (a non-zero exit, a signal, no exit seen).
  ready            INTEGER NOT NULL CHECK (ready IN (0, 1)),
  since_ms         INTEGER NOT NULL,
  last_checked_ms  INTEGER NOT NULL,
  checks           INTEGER NOT NULL,
  failures         INTEGER NOT NULL,
  -- The CNI error of the last failing answer, when its stdout was captured.
  error_code       INTEGER,
  error_msg        TEXT,
  error_details    TEXT,
  exit_code        INTEGER,
  last_call_id     TEXT,
  -- Counts per latency bucket (READINESS_BUCKETS_MS), as a JSON array; sum and max in microseconds.
  latency_json     TEXT NOT NULL,
  latency_sum_us   INTEGER NOT NULL,
  latency_max_us   INTEGER NOT NULL,
  PRIMARY KEY (network, plugin)
) STRICT, WITHOUT ROWID`;

// A network's readiness changed (or its first answer came): at most a few a day on a healthy node.
export const CREATE_READINESS_TRANSITIONS = `
CREATE TABLE cni_readiness_transitions (
  id          INTEGER PRIMARY KEY,
  network     TEXT NOT NULL,
  at_ms       INTEGER NOT NULL,
  ready       INTEGER NOT NULL CHECK (ready IN (0, 1)),
  plugin      TEXT NOT NULL,
  error_code  INTEGER,
  error_msg   TEXT,
  call_id     TEXT
) STRICT;
CREATE INDEX cni_readiness_transitions_by_network ON cni_readiness_transitions (network, at_ms DESC)`;

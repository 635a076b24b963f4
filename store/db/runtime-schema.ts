/**
 * Tables of the runtime's side (schema version 16): what the node's
 * container runtime said over the CRI. A condition's change is one row (no
 * row per poll); a sandbox is one row, rewritten when the runtime reports it
 * differently and kept, with when it went, after the runtime forgets it.
 * These statements never change once shipped.
 */

// A runtime condition (RuntimeReady, NetworkReady…) changed, or cnirec's own `Reachable` (whether the runtime answered).
export const CREATE_RUNTIME_TRANSITIONS = `
CREATE TABLE runtime_transitions (
  id        INTEGER PRIMARY KEY,
  at_ms     INTEGER NOT NULL,
  endpoint  TEXT,
  type      TEXT NOT NULL,
  status    INTEGER NOT NULL CHECK (status IN (0, 1)),
  reason    TEXT NOT NULL,
  message   TEXT NOT NULL
) STRICT;
CREATE INDEX runtime_transitions_by_type ON runtime_transitions (type, at_ms DESC)`;

// One row per pod sandbox the runtime listed. labels/annotations as JSON objects, redacted.
export const CREATE_RUNTIME_SANDBOXES = `
CREATE TABLE runtime_sandboxes (
  id                  TEXT PRIMARY KEY NOT NULL,
  namespace           TEXT NOT NULL,
  name                TEXT NOT NULL,
  uid                 TEXT NOT NULL,
  attempt             INTEGER NOT NULL,
  state               TEXT NOT NULL CHECK (state IN ('ready', 'notready')),
  created_at_ms       INTEGER NOT NULL,
  ip                  TEXT,
  additional_ips_json TEXT NOT NULL,
  labels_json         TEXT NOT NULL,
  annotations_json    TEXT NOT NULL,
  runtime_handler     TEXT NOT NULL,
  first_seen_ms       INTEGER NOT NULL,
  -- The last poll that listed it, written when the row changes and when it goes (the daemon knows later ones).
  seen_at_ms          INTEGER NOT NULL,
  -- The first poll that no longer listed it.
  gone_at_ms          INTEGER
) STRICT;
CREATE INDEX runtime_sandboxes_by_pod ON runtime_sandboxes (namespace, name);
CREATE INDEX runtime_sandboxes_gone ON runtime_sandboxes (gone_at_ms) WHERE gone_at_ms IS NOT NULL`;

/**
 * Schema version 3: indexes for the list filters the API serves most, so
 * every filter shape walks an index in (started_at_us DESC, id DESC) order
 * and stops after a page instead of sorting or passing thousands of rows.
 * Measured on 1,000,000 calls (bench/api-latency.ts): `failed=true` with a
 * command walked calls_by_command past ~2,400 rows a page, a namespace-only
 * filter sorted every call of the namespace in a temporary B-tree, and
 * plugin + minDurationMs fetched every row of the plugin to read its duration.
 */

export const QUERY_INDEXES_V3 = [
  // failed=true with a command (`?command=ADD&failed=true`): only failures, walked in list order.
  'CREATE INDEX calls_failed_by_command ON calls (command, started_at_us DESC, id DESC) WHERE ok = 0',
  // A namespace without a pod: calls_by_pod has the pod name before the time, so it cannot give the order.
  'CREATE INDEX calls_by_namespace ON calls (pod_namespace, started_at_us DESC, id DESC) WHERE pod_namespace IS NOT NULL',
  // The plugin index again, with the columns other filters test (VERSION probes hidden, minDurationMs)
  // after the order: SQLite checks them in the index entry and reads the table row only for a match.
  'DROP INDEX calls_by_plugin',
  'CREATE INDEX calls_by_plugin ON calls (plugin, started_at_us DESC, id DESC, is_version_probe, duration_us)',
];

/**
 * What a bundle keeps of each table: the one place that decides it. Each rule
 * is an SQL condition on the table's rows, over what the selection put in
 * temporary tables (bundle-selection.ts): `temp.bundle_calls` (the calls
 * kept, with everything they delegated), `temp.bundle_containers` (their
 * container ids), `temp.bundle_pods` (the pods asked for), and the
 * parameters :sinceMs/:untilMs, :sinceUs/:untilUs (the window, widened to
 * the calls kept) and :scoped (1 when pods or calls were asked for: then
 * per-pod history is narrowed to them; node-wide history is not).
 *
 * A table without a rule is copied whole, so a table a later migration adds
 * comes along in every bundle before anyone decides otherwise; a unit test
 * (test/unit/bundle-tables.test.ts) fails until each table of the schema has
 * its line here, so that decision is made on purpose.
 */

/** A stream's bytes and its truncated flag: left out (emptied, marked truncated, its total kept) when payloads are. */
export interface PayloadColumns {
  readonly bytes: string;
  readonly truncated: string;
}

export interface TableRule {
  /** Which rows are kept: an SQL condition; '0' keeps none (the table itself still comes, empty). */
  readonly rows: string;
  /** Payload streams, and the column whose time decides whether a row keeps them (oldest dropped first). */
  readonly payloads?: { readonly startedAtUs: string; readonly streams: readonly PayloadColumns[] };
  /** Why this rule, for the reader of this list. */
  readonly why: string;
}

const KEPT_CALL = 'call_id IN (SELECT id FROM temp.bundle_calls)';
const POD = '(pod_namespace, pod_name) IN (SELECT namespace, name FROM temp.bundle_pods)';
const CONTAINER = 'container_id IN (SELECT id FROM temp.bundle_containers)';
/** A history row [from, to) that overlaps the window; `to` null: still open. */
const overlaps = (from: string, to: string) => `(${from} <= :untilMs AND coalesce(${to}, :untilMs) >= :sinceMs)`;

const stream = (name: string): PayloadColumns => ({ bytes: name, truncated: `${name}_truncated` });

export const BUNDLE_TABLES: Readonly<Record<string, TableRule>> = {
  calls: {
    rows: 'id IN (SELECT id FROM temp.bundle_calls)',
    payloads: { startedAtUs: 'started_at_us', streams: [stream('stdin'), stream('stdout'), stream('stderr')] },
    why: 'the calls asked for, with every call they delegated to',
  },
  helpers: {
    rows: KEPT_CALL,
    payloads: { startedAtUs: 'started_at_us', streams: [stream('stdout'), stream('stderr')] },
    why: 'the helpers of those calls',
  },
  call_updates: { rows: KEPT_CALL, why: 'when those calls changed after they ended' },
  call_binaries: { rows: KEPT_CALL, why: 'the binary each of those calls ran' },
  plugin_binaries: {
    rows: 'id IN (SELECT binary_id FROM main.call_binaries WHERE call_id IN (SELECT id FROM temp.bundle_calls)) OR last_seen_ms >= :sinceMs',
    why: 'the binaries those calls ran, and every binary seen in the window',
  },
  tracer_events: { rows: 'at_us BETWEEN :sinceUs AND :untilUs', why: "the recorder's gaps, restarts and losses in the window: node-wide" },
  cache_entries: {
    rows: `${overlaps('first_seen_ms', 'coalesce(superseded_at_ms, removed_at_ms)')} AND (:scoped = 0 OR ${CONTAINER} OR ${POD} OR add_call_id IN (SELECT id FROM temp.bundle_calls) OR del_call_id IN (SELECT id FROM temp.bundle_calls))`,
    why: "libcni cache versions alive in the window (only those pods' and containers' when scoped)",
  },
  ip_history: {
    rows: `${overlaps('from_ms', 'to_ms')} AND (:scoped = 0 OR ${CONTAINER} OR ${POD})`,
    why: 'addresses held in the window (only those pods\' and containers\' when scoped)',
  },
  cache_findings: {
    rows: `(resolved_at_ms IS NULL OR ${overlaps('first_seen_ms', 'resolved_at_ms')}) AND (:scoped = 0 OR ${KEPT_CALL} OR ${CONTAINER} OR ${POD})`,
    why: 'findings open now or in the window (only those about the pods, containers and calls kept when scoped)',
  },
  conf_versions: {
    rows: `${overlaps('valid_from_ms', 'coalesce(superseded_at_ms, removed_at_ms)')}`,
    why: 'every conf file version in force during the window: node-wide, the networks the calls ran in',
  },
  cni_readiness: { rows: '1', why: "each network's STATUS readiness now: a row per network and plugin" },
  cni_readiness_transitions: {
    rows: 'at_ms BETWEEN :sinceMs AND :untilMs OR id IN (SELECT max(id) FROM main.cni_readiness_transitions WHERE at_ms < :sinceMs GROUP BY network)',
    why: "readiness changes in the window, and each network's last one before it (its state when the window opens)",
  },
  runtime_transitions: {
    rows: 'at_ms BETWEEN :sinceMs AND :untilMs OR id IN (SELECT max(id) FROM main.runtime_transitions WHERE at_ms < :sinceMs GROUP BY type)',
    why: "the container runtime's condition changes in the window, and each condition's last one before it: node-wide",
  },
  runtime_sandboxes: {
    rows: `${overlaps('first_seen_ms', 'gone_at_ms')} AND (:scoped = 0 OR id IN (SELECT id FROM temp.bundle_containers) OR (namespace, name) IN (SELECT namespace, name FROM temp.bundle_pods))`,
    why: "what the runtime said of the sandboxes it listed in the window (only those pods' and containers' when scoped)",
  },
  otel_outbox: { rows: '0', why: "the export's queue of this node: nothing to send from a bundle" },
  otel_watermarks: { rows: '1', why: "the export's bookkeeping, two rows" },
};

/**
 * The readiness tables (store/db/readiness-schema.ts): one row per network
 * and plugin, rewritten in place by each answer (so heartbeats cost no
 * space), and a row per transition, the newest MAX_TRANSITIONS per network kept.
 */

import type { Database } from 'better-sqlite3';
import { emptyTally, READINESS_BUCKETS_MS } from './latency.js';
import type { PluginReadiness, ReadinessTransition } from './types.js';

/** Transitions kept per network: weeks of a flapping network's history, a few rows on a healthy one. */
export const MAX_TRANSITIONS = 500;

export interface ReadinessLog {
  /** Every network and plugin asked. */
  plugins(): PluginReadiness[];
  savePlugin(p: PluginReadiness): void;
  /** Newest first; of one network when given (undefined: all). */
  transitions(network: string | null | undefined, limit: number): ReadinessTransition[];
  addTransition(t: Omit<ReadinessTransition, 'id'>): ReadinessTransition;
  /** The error of a network's latest transition, once a later answer carried it. */
  fillTransitionError(id: number, code: number | null, msg: string | null): void;
}

interface PluginRow {
  network: string;
  plugin: string;
  ready: number;
  since_ms: number;
  last_checked_ms: number;
  checks: number;
  failures: number;
  error_code: number | null;
  error_msg: string | null;
  error_details: string | null;
  exit_code: number | null;
  last_call_id: string | null;
  latency_json: string;
  latency_sum_us: number;
  latency_max_us: number;
}

interface TransitionRow {
  id: number;
  network: string;
  at_ms: number;
  ready: number;
  plugin: string;
  error_code: number | null;
  error_msg: string | null;
  call_id: string | null;
}

/** '' stands for "not known" in the key columns. */
const keyOf = (network: string | null): string => network ?? '';
const networkOf = (key: string): string | null => (key === '' ? null : key);

function bucketsOf(json: string): number[] {
  try {
    const v: unknown = JSON.parse(json);
    if (Array.isArray(v) && v.length === READINESS_BUCKETS_MS.length + 1 && v.every((n) => typeof n === 'number')) return v as number[];
  } catch {
    // a row from another build: start its histogram again
  }
  return [...emptyTally().buckets];
}

const toPlugin = (r: PluginRow): PluginReadiness => ({
  network: networkOf(r.network),
  plugin: r.plugin,
  ready: r.ready === 1,
  sinceMs: r.since_ms,
  lastCheckedMs: r.last_checked_ms,
  checks: r.checks,
  failures: r.failures,
  error: r.ready === 1 ? null : { code: r.error_code, msg: r.error_msg, details: r.error_details },
  exitCode: r.exit_code,
  lastCallId: r.last_call_id,
  latency: { buckets: bucketsOf(r.latency_json), sumUs: r.latency_sum_us, maxUs: r.latency_max_us },
});

const toTransition = (r: TransitionRow): ReadinessTransition => ({
  id: r.id,
  network: networkOf(r.network),
  atMs: r.at_ms,
  ready: r.ready === 1,
  plugin: r.plugin,
  errorCode: r.error_code,
  errorMsg: r.error_msg,
  callId: r.call_id,
});

export function createReadinessLog(db: Database): ReadinessLog {
  const all = db.prepare<[], PluginRow>('SELECT * FROM cni_readiness ORDER BY network, plugin');
  const upsert = db.prepare(`
    INSERT INTO cni_readiness (network, plugin, ready, since_ms, last_checked_ms, checks, failures, error_code, error_msg, error_details, exit_code, last_call_id, latency_json, latency_sum_us, latency_max_us)
    VALUES (@network, @plugin, @ready, @sinceMs, @lastCheckedMs, @checks, @failures, @errorCode, @errorMsg, @errorDetails, @exitCode, @lastCallId, @latency, @sumUs, @maxUs)
    ON CONFLICT (network, plugin) DO UPDATE SET ready = excluded.ready, since_ms = excluded.since_ms, last_checked_ms = excluded.last_checked_ms,
      checks = excluded.checks, failures = excluded.failures, error_code = excluded.error_code, error_msg = excluded.error_msg,
      error_details = excluded.error_details, exit_code = excluded.exit_code, last_call_id = excluded.last_call_id,
      latency_json = excluded.latency_json, latency_sum_us = excluded.latency_sum_us, latency_max_us = excluded.latency_max_us`);
  const ofNetwork = db.prepare<[string, number], TransitionRow>('SELECT * FROM cni_readiness_transitions WHERE network = ? ORDER BY at_ms DESC, id DESC LIMIT ?');
  const ofAll = db.prepare<[number], TransitionRow>('SELECT * FROM cni_readiness_transitions ORDER BY at_ms DESC, id DESC LIMIT ?');
  const insert = db.prepare<[string, number, number, string, number | null, string | null, string | null]>(
    'INSERT INTO cni_readiness_transitions (network, at_ms, ready, plugin, error_code, error_msg, call_id) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const trim = db.prepare<[string, string, number]>(
    'DELETE FROM cni_readiness_transitions WHERE network = ? AND id NOT IN (SELECT id FROM cni_readiness_transitions WHERE network = ? ORDER BY at_ms DESC, id DESC LIMIT ?)',
  );
  const fill = db.prepare<[number | null, string | null, number]>('UPDATE cni_readiness_transitions SET error_code = coalesce(error_code, ?), error_msg = coalesce(error_msg, ?) WHERE id = ?');
  const addTransition = db.transaction((t: Omit<ReadinessTransition, 'id'>): ReadinessTransition => {
    const key = keyOf(t.network);
    const { lastInsertRowid } = insert.run(key, t.atMs, t.ready ? 1 : 0, t.plugin, t.errorCode, t.errorMsg, t.callId);
    trim.run(key, key, MAX_TRANSITIONS);
    return { ...t, id: Number(lastInsertRowid) };
  });

  return {
    plugins: () => all.all().map(toPlugin),
    savePlugin(p) {
      upsert.run({
        network: keyOf(p.network),
        plugin: p.plugin,
        ready: p.ready ? 1 : 0,
        sinceMs: p.sinceMs,
        lastCheckedMs: p.lastCheckedMs,
        checks: p.checks,
        failures: p.failures,
        errorCode: p.error?.code ?? null,
        errorMsg: p.error?.msg ?? null,
        errorDetails: p.error?.details ?? null,
        exitCode: p.exitCode,
        lastCallId: p.lastCallId,
        latency: JSON.stringify(p.latency.buckets),
        sumUs: p.latency.sumUs,
        maxUs: p.latency.maxUs,
      });
    },
    transitions: (network, limit) => (network === undefined ? ofAll.all(limit) : ofNetwork.all(keyOf(network), limit)).map(toTransition),
    addTransition: (t) => addTransition(t),
    fillTransitionError: (id, code, msg) => void fill.run(code, msg, id),
  };
}

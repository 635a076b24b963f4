/**
 * What a STATUS answer does to readiness, and whether the call is kept.
 * Runtimes ask every plugin of every 1.1.0 network every few seconds
 * (containerd answers the kubelet's CRI Status so): a healthy answer like the
 * last is folded into counts and latency; a failing one, a slow one and the
 * first after a change of answer (or the first ever) are kept whole. Pure:
 * the time comes with the check.
 */

import { addLatency, emptyTally, mergeTallies } from './latency.js';
import type { NetworkReadiness, PluginReadiness, ReadinessTransition, StatusCheck } from './types.js';

export interface HeartbeatRuleOptions {
  /** A STATUS that takes longer than this (ms) is kept whole (`--capture-slow`). */
  readonly slowMs: number;
}

export type KeepReason = 'first' | 'changed' | 'failing' | 'slow';

export interface CheckResult {
  readonly state: PluginReadiness;
  /** Why the call is kept whole; null: folded into the counts. */
  readonly keep: KeepReason | null;
  /** A failure whose error was not known (light mode) got it from this answer. */
  readonly filledIn: boolean;
}

export function applyCheck(prev: PluginReadiness | null, check: StatusCheck, opts: HeartbeatRuleOptions): CheckResult {
  const changed = prev !== null && prev.ready !== check.ok;
  // The same failure going on: an answer without payloads keeps the error a captured one gave.
  const error = check.ok ? null : (check.answer ?? (prev !== null && !prev.ready && !changed ? prev.error : null));
  const filledIn = !check.ok && prev !== null && !prev.ready && (prev.error?.msg ?? null) === null && (check.answer?.msg ?? null) !== null;
  const keep: KeepReason | null =
    prev === null ? 'first' : !check.ok ? 'failing' : changed ? 'changed' : check.durationUs !== null && check.durationUs > opts.slowMs * 1000 ? 'slow' : null;
  const state: PluginReadiness = {
    network: check.network,
    plugin: check.plugin,
    ready: check.ok,
    sinceMs: prev === null || changed ? check.atMs : prev.sinceMs,
    lastCheckedMs: Math.max(check.atMs, prev?.lastCheckedMs ?? 0),
    checks: (prev?.checks ?? 0) + 1,
    failures: (prev?.failures ?? 0) + (check.ok ? 0 : 1),
    error,
    exitCode: check.ok ? null : check.exitCode,
    lastCallId: keep !== null ? check.callId : (prev?.lastCallId ?? null),
    latency: check.durationUs === null ? (prev?.latency ?? emptyTally()) : addLatency(prev?.latency ?? emptyTally(), check.durationUs),
  };
  return { state, keep, filledIn };
}

/** A network from its plugins' states (and its transitions, newest first). */
export function networkReadiness(network: string | null, plugins: readonly PluginReadiness[], transitions: readonly ReadinessTransition[]): NetworkReadiness {
  const sorted = [...plugins].sort((a, b) => a.plugin.localeCompare(b.plugin));
  const failing = sorted.find((p) => !p.ready) ?? null;
  const ready = sorted.length === 0 ? null : failing === null;
  const last = transitions[0];
  return {
    network,
    ready,
    // The network's last transition; without one (an older record), its plugins' latest change.
    sinceMs: last !== undefined ? last.atMs : sorted.length === 0 ? null : Math.max(...sorted.map((p) => p.sinceMs)),
    lastCheckedMs: sorted.length === 0 ? null : Math.max(...sorted.map((p) => p.lastCheckedMs)),
    failing,
    checks: sorted.reduce((n, p) => n + p.checks, 0),
    plugins: sorted,
    latency: mergeTallies(sorted.map((p) => p.latency)),
    transitions,
  };
}

/** Whether a network's answer changed between two states of it: the transition to record, without its id. */
export function transitionOf(before: NetworkReadiness, after: NetworkReadiness, check: StatusCheck): Omit<ReadinessTransition, 'id'> | null {
  if (after.ready === null || before.ready === after.ready) return null;
  const cause = after.failing ?? after.plugins.find((p) => p.plugin === check.plugin) ?? null;
  return {
    network: after.network,
    atMs: check.atMs,
    ready: after.ready,
    plugin: cause?.plugin ?? check.plugin,
    errorCode: after.ready ? null : (cause?.error?.code ?? null),
    errorMsg: after.ready ? null : (cause?.error?.msg ?? null),
    callId: check.callId,
  };
}

/** Flapping: more than `maxTransitions` changes of readiness within `windowMs` before `nowMs`. */
export const FLAP_WINDOW_MS = 10 * 60_000;
export const FLAP_MAX_TRANSITIONS = 4;

export function transitionsInWindow(transitions: readonly Pick<ReadinessTransition, 'atMs'>[], nowMs: number, windowMs = FLAP_WINDOW_MS): number {
  return transitions.filter((t) => t.atMs > nowMs - windowMs && t.atMs <= nowMs).length;
}

export const isFlapping = (transitions: readonly Pick<ReadinessTransition, 'atMs'>[], nowMs: number, max = FLAP_MAX_TRANSITIONS, windowMs = FLAP_WINDOW_MS): boolean =>
  transitionsInWindow(transitions, nowMs, windowMs) > max;

/**
 * Which capture mode the tracer should be in, and why: the `auto` policy.
 *
 * Payload probes put every syscall of the node on the slow path, so `auto` runs
 * without them (the tracer's light mode) and turns them on only when bytes are
 * worth their cost: a call failed, ran too long or never finished (runtimes
 * retry a failing sandbox, so the retry is recorded with its bytes), a DEL/ADD
 * loop is open, or an operator asked. They go off again after a quiet window,
 * extended while a trigger keeps coming.
 *
 * Pure: every input, the time included, is an argument; the daemon's wiring
 * (daemon/capture-wiring.ts) feeds it events and applies its answer.
 */

import type { CaptureMode } from '../../bpf/index.js';

/** What an operator or the configuration can ask for. */
export const CAPTURE_SETTINGS = ['auto', 'full', 'light'] as const;
export type CaptureSetting = (typeof CAPTURE_SETTINGS)[number];

/** Whose calls keep their payloads while an operator's `full` with a scope is in force. */
export type CaptureScope = { readonly namespace: string; readonly pod: string | null };

export interface CapturePolicyOptions {
  /** The configured setting (`--capture`). */
  readonly configured: CaptureSetting;
  /** How long payloads stay on after the last trigger. */
  readonly quietMs: number;
  /** A call that runs longer than this is a trigger. */
  readonly slowMs: number;
}

interface OperatorRequest {
  readonly setting: CaptureSetting;
  /** Epoch ms; null: until changed. */
  readonly untilMs: number | null;
  readonly scope: CaptureScope | null;
  readonly atMs: number;
}

export interface CapturePolicyState {
  readonly operator: OperatorRequest | null;
  /** Epoch ms until which `auto` keeps payloads on; null when no trigger came yet. */
  readonly autoUntilMs: number | null;
  /** The last trigger, in words, with when it came. */
  readonly autoReason: string | null;
}

/** The policy's answer: what the tracer runs, and what people are told. */
export interface CaptureDecision {
  /** The setting in force: the operator's while it lasts, else the configured one. */
  readonly setting: CaptureSetting;
  /** What the tracer runs now. */
  readonly mode: CaptureMode;
  /** Why, in words people act on. */
  readonly reason: string;
  /** Epoch ms when this decision lapses by itself (an operator's window, auto's quiet window); null: it does not. */
  readonly untilMs: number | null;
  /** While set, only these calls keep their payloads. */
  readonly scope: CaptureScope | null;
}

export const initialCaptureState: CapturePolicyState = { operator: null, autoUntilMs: null, autoReason: null };

/** What a finished call says to the policy: only what it needs. */
export interface ObservedCall {
  readonly command: string | null;
  readonly plugin: string;
  readonly pod: { readonly namespace: string; readonly name: string } | null;
  readonly status: 'running' | 'finished' | 'incomplete';
  readonly exitCode: number | null;
  readonly signal: number | null;
  readonly durationUs: number | null;
  /** Calls made on behalf of another (delegates) or the daemon's own probes do not trigger by themselves. */
  readonly isVersionProbe: boolean;
}

/** Why a call is worth payloads, or null. */
export function callTrigger(call: ObservedCall, slowMs: number): string | null {
  if (call.isVersionProbe) return null;
  const who = `${call.command ?? 'a call'} of ${call.plugin}${call.pod ? ` for ${call.pod.namespace}/${call.pod.name}` : ''}`;
  if (call.status === 'incomplete') return `${who} is incomplete`;
  if (call.signal !== null) return `${who} was killed by signal ${call.signal}`;
  if (call.exitCode !== null && call.exitCode !== 0) return `${who} failed (exit ${call.exitCode})`;
  if (call.durationUs !== null && call.durationUs > slowMs * 1000) return `${who} took ${Math.round(call.durationUs / 1000)} ms`;
  return null;
}

/** A trigger came (a failing call, an open loop finding): payloads on for the quiet window from now. */
export function triggered(state: CapturePolicyState, reason: string, nowMs: number, opts: CapturePolicyOptions): CapturePolicyState {
  const until = nowMs + opts.quietMs;
  return { ...state, autoUntilMs: Math.max(until, state.autoUntilMs ?? 0), autoReason: reason };
}

/** An operator's request: a setting, for a while or until changed, for a scope or the node. */
export function operatorRequest(
  state: CapturePolicyState,
  req: { readonly setting: CaptureSetting; readonly forMs: number | null; readonly scope: CaptureScope | null },
  nowMs: number,
  opts: CapturePolicyOptions,
): CapturePolicyState {
  // Back to what is configured: nothing to remember.
  if (req.setting === opts.configured && req.forMs === null && req.scope === null) return { ...state, operator: null };
  return { ...state, operator: { setting: req.setting, untilMs: req.forMs === null ? null : nowMs + req.forMs, scope: req.scope, atMs: nowMs } };
}

/** Drops what has lapsed, so a status read later does not show a window that has ended. */
export function expire(state: CapturePolicyState, nowMs: number): CapturePolicyState {
  const operatorLapsed = state.operator !== null && state.operator.untilMs !== null && state.operator.untilMs <= nowMs;
  const autoLapsed = state.autoUntilMs !== null && state.autoUntilMs <= nowMs;
  if (!operatorLapsed && !autoLapsed) return state;
  return {
    operator: operatorLapsed ? null : state.operator,
    autoUntilMs: autoLapsed ? null : state.autoUntilMs,
    autoReason: autoLapsed ? null : state.autoReason,
  };
}

export function decide(state: CapturePolicyState, nowMs: number, opts: CapturePolicyOptions): CaptureDecision {
  const s = expire(state, nowMs);
  const op = s.operator;
  const setting = op?.setting ?? opts.configured;
  const byOperator = op !== null;
  const forWhom = op?.scope ? ` for ${scopeText(op.scope)}` : '';
  if (setting === 'full') {
    return { setting, mode: 'full', reason: byOperator ? `an operator asked for payloads${forWhom}` : 'configured: full', untilMs: op?.untilMs ?? null, scope: op?.scope ?? null };
  }
  if (setting === 'light') {
    return { setting, mode: 'light', reason: byOperator ? 'an operator asked for no payloads' : 'configured: light', untilMs: op?.untilMs ?? null, scope: null };
  }
  if (s.autoUntilMs !== null) {
    return { setting, mode: 'full', reason: `auto: ${s.autoReason ?? 'a trigger came'}`, untilMs: s.autoUntilMs, scope: null };
  }
  return { setting, mode: 'light', reason: 'auto: quiet, no failing calls or loops', untilMs: op?.untilMs ?? null, scope: null };
}

export function scopeText(scope: CaptureScope): string {
  return scope.pod === null ? `namespace ${scope.namespace}` : `pod ${scope.namespace}/${scope.pod}`;
}

/** Whether a call's payloads are kept under a scope (null scope: every call's). */
export function inCaptureScope(scope: CaptureScope | null, pod: { readonly namespace: string; readonly name: string } | null): boolean {
  if (scope === null) return true;
  if (pod === null || pod.namespace !== scope.namespace) return false;
  return scope.pod === null || scope.pod === pod.name;
}

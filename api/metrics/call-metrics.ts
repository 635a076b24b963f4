/**
 * Counts finished calls and their durations, by command, plugin and CNI
 * network. Only `call.finished` counts: a call is counted once, when its
 * outcome is known; a later `call.updated` (output or helpers after the
 * plugin exited) is counted apart.
 *
 * The daemon feeds it the calls as the store keeps them (each named by its
 * network: the heartbeat sieve's output) and the sieve's STATUS checks:
 * a STATUS heartbeat folded into readiness is never a stored call, so each
 * top-level STATUS counts once, from its check (its delegates' STATUS, folded
 * with it, are not counted apart). Fed the collector's raw calls alone (no
 * sieve: tests, older wiring), it counts every call, with the network it carries.
 */

import { Counter, Histogram, type Registry } from 'prom-client';
import { type CallListener, type CniCall, callSucceeded } from '../../collector/index.js';
import type { ReadinessListener } from '../../store/index.js';
import { commandLabel, createNetworkLabeler, createPluginLabeler, isPluginCall, OTHER } from './metric-labels.js';

/**
 * CNI calls range from a few ms (VERSION, host-local) through hundreds of ms
 * (bridge with iptables) to many seconds when something hangs; runtimes
 * commonly give up after a few minutes, so 60 s marks "stuck".
 */
export const CALL_DURATION_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export type CallOutcomeLabel = 'ok' | 'failed' | 'incomplete';

export function outcomeLabel(call: Pick<CniCall, 'status' | 'outcome'>): CallOutcomeLabel {
  if (call.status === 'incomplete' || call.outcome === null) return 'incomplete';
  return callSucceeded(call) ? 'ok' : 'failed';
}

export interface CallMetrics {
  /** Subscribe to calls (as stored, when `countsStatusChecks`). */
  readonly calls: CallListener;
  /** Subscribe to the sieve's readiness: each STATUS check it folded or kept. */
  readonly statusChecks: ReadinessListener;
}

const isStatusRoot = (c: CniCall) => c.parentId === null && c.command === 'STATUS' && !c.isVersionProbe;

/** `countsStatusChecks`: top-level STATUS calls are counted from the readiness checks (and skipped as calls, but for incomplete ones, which are no check). */
export function createCallMetrics(registry: Registry, { countsStatusChecks = false }: { countsStatusChecks?: boolean } = {}): CallMetrics {
  const calls = new Counter({
    name: 'cnirec_calls_total',
    help: 'CNI plugin calls that ended, by command, plugin, CNI network ("" when not known) and outcome (ok, failed, incomplete)',
    labelNames: ['command', 'plugin', 'network', 'outcome'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'cnirec_call_duration_seconds',
    help: 'Duration of CNI plugin calls that ended with a known outcome, by command, plugin and CNI network',
    labelNames: ['command', 'plugin', 'network'] as const,
    buckets: CALL_DURATION_BUCKETS_SECONDS,
    registers: [registry],
  });
  // So an operator can see the rules at work (or that a new plugin's secrets are not caught) without reading payloads.
  const redacted = new Counter({
    name: 'cnirec_redacted_payloads_total',
    help: 'Payloads of ended calls whose secret values were replaced before storing, by stream (stdin, stdout, stderr, helper)',
    labelNames: ['stream'] as const,
    registers: [registry],
  });
  const updated = new Counter({
    name: 'cnirec_calls_updated_total',
    help: 'Ended calls that changed afterwards (descendants that outlived the plugin wrote to its stdout/stderr, or ended, later), by command',
    labelNames: ['command'] as const,
    registers: [registry],
  });
  const pluginLabel = createPluginLabeler();
  const networkLabel = createNetworkLabeler();

  const count = (labels: { command: string; plugin: string; network: string }, outcome: CallOutcomeLabel, durationUs: number | null) => {
    calls.inc({ ...labels, outcome });
    // An incomplete call's end is a guess (exit unseen, process found gone): not a duration.
    if (outcome !== 'incomplete' && durationUs !== null) duration.observe(labels, durationUs / 1e6);
  };

  return {
    calls: {
      onEvents(events) {
        for (const event of events) {
          if (event.type === 'call.updated') updated.inc({ command: commandLabel(event.call.command) });
          if (event.type !== 'call.finished') continue;
          const call = event.call;
          const outcome = outcomeLabel(call);
          if (countsStatusChecks && isStatusRoot(call) && outcome !== 'incomplete') continue;
          count({ command: commandLabel(call.command), plugin: pluginLabel(isPluginCall(call) ? call.plugin : OTHER), network: networkLabel(call.network ?? null) }, outcome, call.durationUs);
          if (call.stdin.redactions) redacted.inc({ stream: 'stdin' });
          if (call.stdout.redactions) redacted.inc({ stream: 'stdout' });
          if (call.stderr.redactions) redacted.inc({ stream: 'stderr' });
          for (const h of call.helpers) {
            if (h.stdout.redactions) redacted.inc({ stream: 'helper' });
            if (h.stderr.redactions) redacted.inc({ stream: 'helper' });
          }
        }
      },
    },
    statusChecks: {
      onReadiness(event) {
        if (!countsStatusChecks || event.type !== 'check') return;
        count({ command: 'STATUS', plugin: pluginLabel(event.plugin), network: networkLabel(event.network) }, event.ok ? 'ok' : 'failed', event.durationUs);
      },
    },
  };
}

/**
 * Counts finished calls and their durations, fed by the collector like the
 * store and the tail. Only `call.finished` counts: a call is counted once,
 * when its outcome is known; a later `call.updated` (output or helpers after
 * the plugin exited) is counted apart.
 */

import { Counter, Histogram, type Registry } from 'prom-client';
import { type CallListener, type CniCall, callSucceeded } from '../../collector/index.js';
import { commandLabel, createPluginLabeler, isPluginCall, OTHER } from './metric-labels.js';

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

export function createCallMetrics(registry: Registry): CallListener {
  const calls = new Counter({
    name: 'cnirec_calls_total',
    help: 'CNI plugin calls that ended, by command, plugin and outcome (ok, failed, incomplete)',
    labelNames: ['command', 'plugin', 'outcome'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'cnirec_call_duration_seconds',
    help: 'Duration of CNI plugin calls that ended with a known outcome',
    labelNames: ['command', 'plugin'] as const,
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

  return {
    onEvents(events) {
      for (const event of events) {
        if (event.type === 'call.updated') updated.inc({ command: commandLabel(event.call.command) });
        if (event.type !== 'call.finished') continue;
        const call = event.call;
        const labels = { command: commandLabel(call.command), plugin: pluginLabel(isPluginCall(call) ? call.plugin : OTHER) };
        const outcome = outcomeLabel(call);
        calls.inc({ ...labels, outcome });
        // An incomplete call's end is a guess (exit unseen, process found gone): not a duration.
        if (outcome !== 'incomplete' && call.durationUs !== null) duration.observe(labels, call.durationUs / 1e6);
        if (call.stdin.redactions) redacted.inc({ stream: 'stdin' });
        if (call.stdout.redactions) redacted.inc({ stream: 'stdout' });
        if (call.stderr.redactions) redacted.inc({ stream: 'stderr' });
        for (const h of call.helpers) {
          if (h.stdout.redactions) redacted.inc({ stream: 'helper' });
          if (h.stderr.redactions) redacted.inc({ stream: 'helper' });
        }
      }
    },
  };
}

/** The store's readiness per network → the contract's NetworkReadiness (api/schemas/readiness.ts). */

import { isoFromMs } from '../../lib/index.js';
import { quantileMs, type LatencyTally, type NetworkReadiness, type PluginReadiness } from '../../store/index.js';
import type { NetworkReadinessView } from '../schemas/readiness.js';

const round = (ms: number | null): number | null => (ms === null ? null : Math.round(ms * 1000) / 1000);

function latencyOf(t: LatencyTally): NetworkReadinessView['latency'] {
  const n = t.buckets.reduce((a, b) => a + b, 0);
  return { p50Ms: round(quantileMs(t, 0.5)), p99Ms: round(quantileMs(t, 0.99)), maxMs: n === 0 ? null : round(t.maxUs / 1000), meanMs: n === 0 ? null : round(t.sumUs / n / 1000) };
}

const errorOf = (p: PluginReadiness | null) => (p === null || p.ready ? null : (p.error ?? { code: null, msg: null, details: null }));

export function presentReadiness(n: NetworkReadiness): NetworkReadinessView {
  return {
    network: n.network,
    ready: n.ready,
    since: n.sinceMs === null ? null : isoFromMs(n.sinceMs),
    lastCheckedAt: n.lastCheckedMs === null ? null : isoFromMs(n.lastCheckedMs),
    plugin: n.failing?.plugin ?? null,
    error: errorOf(n.failing),
    checks: n.checks,
    latency: latencyOf(n.latency),
    plugins: n.plugins.map((p) => ({
      plugin: p.plugin,
      ready: p.ready,
      since: isoFromMs(p.sinceMs),
      lastCheckedAt: isoFromMs(p.lastCheckedMs),
      checks: p.checks,
      failures: p.failures,
      exitCode: p.exitCode,
      error: errorOf(p),
      lastCallId: p.lastCallId,
      latency: latencyOf(p.latency),
    })),
    transitions: n.transitions.map((t) => ({ at: isoFromMs(t.atMs), ready: t.ready, plugin: t.plugin, code: t.errorCode, msg: t.errorMsg, callId: t.callId })),
  };
}

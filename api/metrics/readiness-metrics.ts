/**
 * CNI STATUS on /metrics: whether each network is ready now (alert on 0: the
 * runtime reports the node NotReady), and how long STATUS takes, per network.
 * Network names come from conf files and stdins: a node has a handful; beyond
 * MAX_NETWORK_LABELS the rest share "other".
 */

import { Gauge, Histogram, type Registry } from 'prom-client';
import { READINESS_BUCKETS_MS } from '../../store/index.js';
import type { ReadinessDeps } from '../deps.js';
import { OTHER } from './metric-labels.js';

const MAX_NETWORK_LABELS = 32;

export function registerReadinessMetrics(registry: Registry, readiness: ReadinessDeps): () => void {
  const seen = new Set<string>();
  /** '' for calls whose network is not known. */
  const label = (network: string | null): string => {
    const name = network ?? '';
    if (seen.has(name)) return name;
    if (seen.size >= MAX_NETWORK_LABELS) return OTHER;
    seen.add(name);
    return name;
  };
  new Gauge({
    name: 'cnirec_cni_network_ready',
    help: "1 while every plugin of the CNI network answers STATUS successfully, 0 while one fails (the runtime reports the node NotReady); networks never asked are absent",
    labelNames: ['network'],
    registers: [registry],
    collect() {
      this.reset();
      for (const n of readiness.networks()) if (n.ready !== null) this.set({ network: label(n.network) }, n.ready ? 1 : 0);
    },
  });
  const duration = new Histogram({
    name: 'cnirec_cni_status_duration_seconds',
    help: 'How long CNI STATUS calls took, by network, since the daemon started (every check, stored or folded into readiness)',
    labelNames: ['network', 'ok'],
    buckets: READINESS_BUCKETS_MS.map((ms) => ms / 1000),
    registers: [registry],
  });
  return readiness.subscribe({
    onReadiness(event) {
      if (event.type !== 'check' || event.durationUs === null) return;
      duration.observe({ network: label(event.network), ok: event.ok ? 'true' : 'false' }, event.durationUs / 1e6);
    },
  });
}

/**
 * The container runtime's side on /metrics, for the fleet's alerts:
 * - `cnirec_runtime_reachable`: 1 while the runtime answers the CRI, 0 while it does not (absent with
 *   `--cri-endpoint none`, before the first poll, and while none of the usual sockets ever answered: a node
 *   without a CRI runtime; a configured socket that does not answer is 0);
 * - `cnirec_runtime_condition{type}`: 1 while the condition's status is true, 0 while false, one series per
 *   condition the runtime reports (RuntimeReady, NetworkReady), only while it answers (a value it no longer
 *   vouches for is not exported: alert on `cnirec_runtime_reachable == 0` for that);
 * - `cnirec_leaked_attachments{network}`: open `leaked-attachment` findings per network (networks with none
 *   are absent).
 * Condition types and network names come from the runtime and the conf files: a node has a handful; beyond
 * the bound the rest share "other".
 */

import { Gauge, type Registry } from 'prom-client';
import type { RuntimeDeps } from '../deps.js';
import { OTHER } from './metric-labels.js';
import { noSample } from './no-sample.js';

const MAX_LABELS = 32;

function boundedLabels(): (value: string) => string {
  const seen = new Set<string>();
  return (value) => {
    if (seen.has(value)) return value;
    if (seen.size >= MAX_LABELS) return OTHER;
    seen.add(value);
    return value;
  };
}

export function registerRuntimeMetrics(registry: Registry, runtime: RuntimeDeps): void {
  const conditionLabel = boundedLabels();
  const networkLabel = boundedLabels();
  new Gauge({
    name: 'cnirec_runtime_reachable',
    help: 'The container runtime answers the CRI (1) or not (0); absent when the runtime is not asked (--cri-endpoint none), before the first poll, or when none was ever found at the usual sockets',
    registers: [registry],
    collect() {
      this.reset();
      const v = runtime.view();
      // Off, not asked yet (the first poll comes once the tracer records), or no runtime ever found at the usual
      // sockets (a node without one): nothing to alert on. A runtime that answered once and is gone is 0.
      const neverFound = !v.reachable && v.endpoint === null && v.transitions.length === 0;
      if (v.problem?.kind !== 'off' && v.lastCheckedAtMs !== null && !neverFound) this.set(v.reachable ? 1 : 0);
      else noSample(this);
    },
  });
  new Gauge({
    name: 'cnirec_runtime_condition',
    help: "A condition of the container runtime's CRI Status: 1 while true, 0 while false (NetworkReady 0: the kubelet reports the node NotReady); only while the runtime answers",
    labelNames: ['type'],
    registers: [registry],
    collect() {
      this.reset();
      const v = runtime.view();
      if (!v.reachable) return;
      for (const c of v.conditions) this.set({ type: conditionLabel(c.type) }, c.status ? 1 : 0);
    },
  });
  new Gauge({
    name: 'cnirec_leaked_attachments',
    help: 'Attachments whose sandbox the container runtime no longer lists (open leaked-attachment findings), by network: their addresses are leaked until `cnirec gc --apply` frees them',
    labelNames: ['network'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [network, n] of runtime.leakedByNetwork()) this.inc({ network: networkLabel(network ?? '') }, n);
    },
  });
}

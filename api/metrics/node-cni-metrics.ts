/**
 * The node's CNI setup on /metrics: conf file changes (alert on a change
 * followed by failures), the doctor's problems by severity (from the report
 * the daemon refreshes after each change and every minute), and binary
 * provenance's hashing.
 */

import { Counter, Gauge, type Registry } from 'prom-client';
import type { NodeCniStatus } from '../deps.js';
import { scrapedMetrics } from './scraped-metrics.js';

export function registerNodeCniMetrics(registry: Registry, status: () => NodeCniStatus): void {
  const { gauge, total } = scrapedMetrics(registry);
  new Counter({
    name: 'cnirec_cni_conf_changes_total',
    help: 'CNI conf dir files added, changed (other bytes) or removed since the daemon started',
    labelNames: ['change'],
    registers: [registry],
    collect() {
      const c = status().changes;
      this.reset();
      this.inc({ change: 'added' }, c.added);
      this.inc({ change: 'changed' }, c.changed);
      this.inc({ change: 'removed' }, c.removed);
    },
  });
  new Gauge({
    name: 'cnirec_cni_doctor_problems',
    help: "Problems `cnirec doctor` finds in the node's CNI setup now, by severity (error: pods fail to get network)",
    labelNames: ['severity'],
    registers: [registry],
    collect() {
      const p = status().problems;
      this.set({ severity: 'error' }, p.error);
      this.set({ severity: 'warning' }, p.warning);
    },
  });
  gauge('cnirec_cni_conf_files', 'Files in the followed CNI conf dirs', () => status().watchedFiles);
  total('cnirec_cni_binaries_hashed_total', 'Plugin binary versions hashed (each version once)', () => status().binariesHashed);
  total('cnirec_cni_binary_lookups_dropped_total', 'Calls whose binary was not identified because the queue was full', () => status().binaryQueueDropped);
}

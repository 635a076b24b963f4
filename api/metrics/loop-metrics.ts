/**
 * The pods a DEL or ADD loop holds now, by name, for alerts that say which pod
 * to look at: one series per open loop finding with its failures so far.
 * Loops are rare and each is a stuck pod: the cap only guards against a
 * runaway; past it, one series with empty names counts the rest.
 */

import { Gauge, type Registry } from 'prom-client';
import type { FindingsReader } from '../../store/index.js';

const MAX_LOOP_SERIES = 50;
const LOOP_KINDS = ['del-loop', 'add-loop'] as const;

export function registerLoopMetrics(registry: Registry, findings: Pick<FindingsReader, 'listFindings'>): void {
  new Gauge({
    name: 'cnirec_open_loop_failures',
    help: 'Failures so far of each open DEL or ADD loop (a runtime retrying a pod\'s DEL or ADD that keeps failing), by kind and pod; absent when none is open',
    labelNames: ['kind', 'namespace', 'pod'] as const,
    registers: [registry],
    collect() {
      this.reset();
      let series = 0;
      for (const kind of LOOP_KINDS) {
        let rest = 0;
        for (const f of findings.listFindings({ kind, limit: 1000 })) {
          if (series >= MAX_LOOP_SERIES) {
            rest += f.count ?? 1;
            continue;
          }
          const labels = { kind, namespace: f.podNamespace ?? '', pod: f.podName ?? '' };
          // Two sandboxes of one pod looping: one series, their failures added.
          this.inc(labels, f.count ?? 1);
          series++;
        }
        if (rest > 0) this.inc({ kind, namespace: '', pod: '' }, rest);
      }
    },
  });
}

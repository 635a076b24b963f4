/**
 * A gauge without labels that has nothing to say this scrape: prom-client's
 * reset() gives such a gauge a 0 sample, which an alert takes for a value (a
 * runtime "unreachable" on a node that has none). With no value in its map it
 * is exposed with its HELP and TYPE and no sample, which Prometheus sees as
 * absent. prom-client 15 keeps the values in `hashMap`; a test
 * (test/unit/no-sample.test.ts) proves it still does.
 */

import type { Gauge } from 'prom-client';

export function noSample(gauge: Gauge): void {
  (gauge as unknown as { hashMap: Record<string, unknown> }).hashMap = {};
}

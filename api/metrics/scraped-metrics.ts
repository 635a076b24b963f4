/**
 * Metrics read at scrape time from numbers the daemon already keeps, rather
 * than mirrored on every change: one gauge or counter per number, each
 * asking its source when Prometheus scrapes.
 */

import { Counter, Gauge, type Registry } from 'prom-client';

/** Registers a metric whose value `value` reads at each scrape. */
export type ScrapedMetric = (name: string, help: string, value: () => number) => void;

export interface ScrapedMetrics {
  readonly gauge: ScrapedMetric;
  /** A total the daemon keeps (it only grows), exposed as a counter. */
  readonly total: ScrapedMetric;
}

export function scrapedMetrics(registry: Registry): ScrapedMetrics {
  return {
    gauge(name, help, value) {
      new Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          this.set(value());
        },
      });
    },
    // prom-client counters only go up by inc(): restart from zero and add the daemon's total.
    total(name, help, value) {
      new Counter({
        name,
        help,
        registers: [registry],
        collect() {
          this.reset();
          this.inc(Math.max(0, value()));
        },
      });
    },
  };
}

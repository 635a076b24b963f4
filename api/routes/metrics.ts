/**
 * GET /metrics: Prometheus text. Each app gets its own registry (never
 * prom-client's global one), so several apps in one process, as in tests,
 * do not collide on metric names.
 */

import type { FastifyInstance } from 'fastify';
import { Registry } from 'prom-client';
import type { MetricsDeps } from '../deps.js';
import { createCallMetrics } from '../metrics/call-metrics.js';
import { registerDaemonMetrics } from '../metrics/daemon-metrics.js';
import { registerOtelMetrics } from '../metrics/otel-metrics.js';
import { registerRetentionMetrics, registerWriteMetrics } from '../metrics/store-metrics.js';
import { registerNodeCniMetrics } from '../metrics/node-cni-metrics.js';
import { readTailStats } from '../tail/tail-stats.js';

export function registerMetrics(app: FastifyInstance, deps: MetricsDeps): void {
  const registry = new Registry();
  const unsubscribe = deps.subscribe?.(createCallMetrics(registry));
  app.addHook('onClose', async () => unsubscribe?.());
  // Looked up per scrape: the tail may be registered after this route, or not at all.
  registerDaemonMetrics(registry, deps, () => readTailStats(app));
  // Retention: write stalls and what retention deletes.
  const unobserveWrites = deps.writeTiming ? registerWriteMetrics(registry, deps.writeTiming) : undefined;
  app.addHook('onClose', async () => unobserveWrites?.());
  if (deps.retentionStatus) registerRetentionMetrics(registry, deps.retentionStatus);
  const nodeCni = deps.nodeCni;
  if (nodeCni) registerNodeCniMetrics(registry, () => nodeCni.status());
  if (deps.otelStatus) registerOtelMetrics(registry, deps.otelStatus);

  app.get('/metrics', async (_request, reply) => {
    const text = await registry.metrics();
    return reply.type(registry.contentType).send(text);
  });
}

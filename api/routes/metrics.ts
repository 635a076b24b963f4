/**
 * GET /metrics: Prometheus text. Each app gets its own registry (never
 * prom-client's global one), so several apps in one process, as in tests,
 * do not collide on metric names. Besides cnirec's own: prom-client's
 * default process and Node.js metrics (process_*, nodejs_*) and
 * cnirec_build_info, as every maintained exporter has them.
 */

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { plainJsonSerializer } from '../present/fast-json.js';
import { errorResponses } from '../schemas/error.js';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { MetricsDeps } from '../deps.js';
import { createCallMetrics } from '../metrics/call-metrics.js';
import { registerDaemonMetrics } from '../metrics/daemon-metrics.js';
import { registerOtelMetrics } from '../metrics/otel-metrics.js';
import { registerRetentionMetrics, registerWriteMetrics } from '../metrics/store-metrics.js';
import { registerNodeCniMetrics } from '../metrics/node-cni-metrics.js';
import { registerReadinessMetrics } from '../metrics/readiness-metrics.js';
import { registerLoopMetrics } from '../metrics/loop-metrics.js';
import { registerRuntimeMetrics } from '../metrics/runtime-metrics.js';
import { readTailStats } from '../tail/tail-stats.js';

export function registerMetrics(app: FastifyInstance, deps: MetricsDeps): void {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  new Gauge({ name: 'cnirec_build_info', help: 'Always 1; the labels say which cnirec and Node.js run', labelNames: ['version', 'nodejs'] as const, registers: [registry] }).set(
    { version: deps.version ?? 'unknown', nodejs: process.version },
    1,
  );
  // Calls as stored (named by their network) with the STATUS checks folded beside them; else the collector's own.
  const callMetrics = createCallMetrics(registry, { countsStatusChecks: deps.subscribeStored !== undefined && deps.readiness !== undefined });
  const unsubscribe = (deps.subscribeStored ?? deps.subscribe)?.(callMetrics.calls);
  const unsubscribeChecks = deps.subscribeStored ? deps.readiness?.subscribe(callMetrics.statusChecks) : undefined;
  app.addHook('onClose', async () => {
    unsubscribe?.();
    unsubscribeChecks?.();
  });
  if (deps.findings) registerLoopMetrics(registry, deps.findings);
  // Looked up per scrape: the tail may be registered after this route, or not at all.
  registerDaemonMetrics(registry, deps, () => readTailStats(app));
  // Retention: write stalls and what retention deletes.
  const unobserveWrites = deps.writeTiming ? registerWriteMetrics(registry, deps.writeTiming) : undefined;
  app.addHook('onClose', async () => unobserveWrites?.());
  if (deps.retentionStatus) registerRetentionMetrics(registry, deps.retentionStatus);
  const nodeCni = deps.nodeCni;
  if (nodeCni) registerNodeCniMetrics(registry, () => nodeCni.status());
  if (deps.otelStatus) registerOtelMetrics(registry, deps.otelStatus);
  const unsubscribeReadiness = deps.readiness ? registerReadinessMetrics(registry, deps.readiness) : undefined;
  app.addHook('onClose', async () => unsubscribeReadiness?.());
  if (deps.runtime) registerRuntimeMetrics(registry, deps.runtime);

  app.withTypeProvider<ZodTypeProvider>().get(
    '/metrics',
    {
      schema: {
        tags: ['metrics'],
        operationId: 'getMetrics',
        summary: 'Prometheus metrics: calls by command, plugin and outcome, durations, tracer, store, tail and cache watcher',
        description: 'The Prometheus text exposition format; the README lists the metrics. Needs the token when the daemon has one.',
        response: {
          200: { description: 'Prometheus text format', content: { 'text/plain; version=0.0.4': { schema: z.string() } } },
          ...errorResponses(401),
        },
      },
      // The body is text already; only an error (401) is JSON, sent as it is.
      serializerCompiler: plainJsonSerializer,
    },
    async (_request, reply) => {
      const text = await registry.metrics();
      return reply.type(registry.contentType).send(text);
    },
  );
}

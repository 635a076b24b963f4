/**
 * Builds the HTTP app. Tests call this builder with in-process fakes; the
 * daemon (daemon/run.ts) wires the real collector and store and listens.
 */

import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { authEnabled, registerAuth } from './auth.js';
import type { ApiDeps } from './deps.js';
import { answerFrameworkError, registerErrorHandling } from './errors.js';
import { createReadOps } from './read-ops.js';
import { closeRefusedUpgrades } from './refused-upgrades.js';
import { registerBundle, registerSourceHeader } from './routes/bundle.js';
import { registerCache } from './routes/cache.js';
import { registerCalls } from './routes/calls.js';
import { registerDocs, registerOpenApi } from './routes/docs.js';
import { registerHealth } from './routes/health.js';
import { registerMetrics } from './routes/metrics.js';
import { registerNodeCni } from './routes/node-cni.js';
import { registerCniStatus } from './routes/cni-status.js';
import { registerNodeRuntime } from './routes/node-runtime.js';
import { registerPods } from './routes/pods.js';
import { registerReplay } from './routes/replay.js';
import { registerTail } from './routes/tail.js';
import { registerTracer } from './routes/tracer.js';
import { registerUi } from './routes/ui.js';

export async function buildApp(deps: ApiDeps): Promise<FastifyInstance> {
  // pino's Logger is a FastifyBaseLogger; the cast keeps the instance on fastify's default logger type.
  const app: FastifyInstance = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger | undefined,
    logController: new LogController({ disableRequestLogging: true }),
    // Pod names may be 253 characters, more once percent-encoded; the zod
    // schemas set the real limits and name the field when one is exceeded.
    routerOptions: { maxParamLength: 1024 },
    frameworkErrors: answerFrameworkError,
  });
  // Zod validates requests and shapes responses; the same schemas feed the OpenAPI document.
  // The busy routes (a page of calls, a pod's story) bypass the zod serializer with their own
  // (present/fast-json.ts): it walks every field of every call through the schema before
  // JSON.stringify, which cost more than the query for a page of 100 calls or a story of 300 trees
  // (bench/README.md, "API latency"). Their bodies come from the typed mappers of api/present,
  // which build exactly the schema's shape, and the route tests check each against its schema.
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  // Order matters from here on. Error handling and auth first, so they cover
  // every route below (and unknown ones); the OpenAPI plugin before any
  // route, because it only sees routes added after it.
  registerErrorHandling(app);
  registerAuth(app, deps.token);
  registerSourceHeader(app, deps);
  // Root level, so it also covers upgrades the auth hook refuses before any route's hooks run.
  closeRefusedUpgrades(app);
  await registerOpenApi(app, { authRequired: authEnabled(deps.token) });

  const reads = createReadOps({ store: deps.store, cache: deps.cache?.reader ?? null, findings: deps.findings ?? null, runtime: deps.runtime ?? null });
  registerHealth(app, deps);
  registerCalls(app, reads);
  registerReplay(app, reads);
  registerPods(app, reads);
  registerTracer(app, deps);
  registerCache(app, reads);
  registerNodeCni(app, deps);
  registerCniStatus(app, deps);
  registerBundle(app, deps);
  registerNodeRuntime(app, deps);
  await registerDocs(app);

  // Live side (api/tail/, api/metrics/): the websocket tail and /metrics.
  // They follow the collector through deps.subscribe and inherit the auth and
  // error handling above.
  await registerTail(app, deps);
  registerMetrics(app, deps);
  // The web view's files: open to all (they hold no data), under their own security headers.
  await registerUi(app, deps);
  return app;
}

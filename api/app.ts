/**
 * Builds the HTTP app. Tests call this builder with in-process fakes; the
 * daemon (cli/run.ts) wires the real collector and store and listens.
 */

import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { CollectorStats, TracerStatus } from '../collector/collector.js';
import { registerHealth } from './routes/health.js';

/** What the API reads from the rest of the daemon. */
export interface ApiDeps {
  readonly tracerStatus: () => TracerStatus;
  readonly collectorStats: () => CollectorStats;
  readonly storeStatus: () => StoreStatus;
  readonly logger?: Logger;
}

export interface StoreStatus {
  readonly writable: boolean;
  readonly lastError: string | null;
  readonly pendingWrites: number;
  readonly droppedWrites: number;
  readonly databaseBytes: number;
}

export async function buildApp(deps: ApiDeps): Promise<FastifyInstance> {
  // pino's Logger is a FastifyBaseLogger; the cast keeps the instance on fastify's default logger type.
  const app: FastifyInstance = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger | undefined,
    logController: new LogController({ disableRequestLogging: true }),
  });
  registerHealth(app, deps);
  return app;
}

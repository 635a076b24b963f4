/**
 * GET /healthz: "ok" when the tracer records and the store writes,
 * "degraded" otherwise, with `problems` saying why in sentences an operator
 * can act on and the numbers behind them; and the CNI cache watcher's state
 * (null when the daemon watches no cache directory).
 */

import type { FastifyInstance } from 'fastify';
import type { TracerStatus } from '../../collector/collector.js';
import type { ApiDeps, StoreStatus } from '../app.js';

export function registerHealth(app: FastifyInstance, deps: ApiDeps): void {
  app.get('/healthz', async () => {
    const tracer = deps.tracerStatus();
    const store = deps.storeStatus();
    const stats = deps.collectorStats();
    const problems = healthProblems(tracer, store);
    const lastRecordAgeMs = tracer.lastRecordAt === null ? null : Date.now() - Date.parse(tracer.lastRecordAt);
    // CNI cache (issue 4). Problems and findings are the node's, not the daemon's: they do not make it degraded.
    const cache = deps.cacheStatus?.() ?? null;
    return {
      status: problems.length === 0 ? 'ok' : 'degraded',
      problems,
      tracer: { ...tracer, lastEventAgeMs: lastRecordAgeMs },
      calls: stats,
      store,
      cache: cache === null ? null : { ...cache, lastRescanAgeMs: cache.lastRescanAt === null ? null : Date.now() - Date.parse(cache.lastRescanAt) },
    };
  });
}

/** Why the daemon is degraded; empty when it records and stores. */
export function healthProblems(tracer: TracerStatus, store: StoreStatus): string[] {
  const problems: string[] = [];
  if (!tracer.running || !tracer.ready) {
    const gap = tracer.lastGap?.endedAt === null ? tracer.lastGap : null;
    problems.push(
      gap
        ? `The tracer is not recording since ${gap.startedAt} (${gap.reason}); it is being restarted. Calls made meanwhile are not recorded.`
        : `The tracer is not recording${tracer.lastError ? ` (${tracer.lastError})` : ''}. Calls made meanwhile are not recorded.`,
    );
  }
  if (!store.writable) {
    const kept = `${store.pendingWrites} calls are kept in memory and retried every second`;
    const dropped = store.droppedWrites > 0 ? `; ${store.droppedWrites} were dropped because the queue was full` : '';
    problems.push(`The database cannot be written since ${store.failingSince ?? 'recently'}: ${store.lastError ?? 'unknown error'} ${kept}${dropped}.`);
  }
  return problems;
}

/**
 * How /metrics reads the live tail's numbers without the two routes knowing
 * of each other: registerTail decorates the app with a reader under this
 * name, registerMetrics looks for it at scrape time (so their order does not
 * matter, and metrics without a tail simply report no clients).
 */

import type { FastifyInstance } from 'fastify';

export interface TailStats {
  /** Clients connected now. */
  readonly clients: number;
  /** Clients closed for being too slow, since the app started. */
  readonly droppedClients: number;
  /** Messages those clients never got. */
  readonly droppedMessages: number;
}

export interface TailStatsReader {
  read(): TailStats;
}

export const TAIL_STATS_DECORATOR = 'cnirecTailStats';

export function readTailStats(app: FastifyInstance): TailStats | null {
  if (!app.hasDecorator(TAIL_STATS_DECORATOR)) return null;
  return app.getDecorator<TailStatsReader>(TAIL_STATS_DECORATOR).read();
}

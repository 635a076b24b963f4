/**
 * The daemon's retention worker, kept out of run.ts: the limits from the
 * config, and what the operator is told. A run that deleted data early
 * because of the size limit is a warning (the history is shorter than the
 * maximum age promised); a plain age run is info, or nothing when it
 * deleted nothing. STATUS calls past the newest their network keeps go
 * every run while a network stays NotReady: debug, not a line every 10 s.
 */

import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import { createRetentionWorker, type RetentionRun, type RetentionWorker } from '../store/index.js';
import type { DaemonConfig } from './config.js';

export function createRetentionWiring(db: Database, config: Pick<DaemonConfig, 'retentionMaxAge' | 'retentionMaxDbSize'>, log: Logger): RetentionWorker {
  const worker = createRetentionWorker(db, {
    maxAgeMs: config.retentionMaxAge,
    maxDbBytes: config.retentionMaxDbSize,
    onRun: (run) => report(run, config.retentionMaxDbSize, log),
    onError: (err) => log.error({ err: err.message }, 'retention failed; the database may grow past its limits until it succeeds'),
  });
  const status = worker.status();
  if (!status.enabled) log.warn('retention is off (--retention-max-age 0 and --retention-max-db-size 0): the database grows without bound');
  if (status.enabled && status.autoVacuum !== 'incremental') {
    log.warn({ autoVacuum: status.autoVacuum }, 'the database is not in incremental auto-vacuum mode: retention frees space inside the file but the file does not shrink');
  }
  return worker;
}

function report(run: RetentionRun, maxDbBytes: number, log: Logger): void {
  const deleted = Object.values(run.deleted).reduce((a, b) => a + b, 0);
  const fields = { deleted: run.deleted, sizeBytes: run.sizeAfterBytes, oldestCallAt: run.oldestCallAt, durationMs: Math.round(run.durationMs), longestStepMs: Math.round(run.longestStepMs) };
  if (run.overLimit) {
    log.error({ ...fields, maxDbBytes }, 'the database is over its size limit and only calls in flight and live cache state are left; raise --retention-max-db-size');
  } else if (run.bySize) {
    log.warn({ ...fields, maxDbBytes }, 'retention deleted data before its maximum age to keep the database under --retention-max-db-size');
  } else if (deleted - run.statusCapped.calls - run.statusCapped.helpers > 0) {
    log.info(fields, 'retention deleted data older than --retention-max-age');
  } else if (run.statusCapped.calls > 0) {
    log.debug(fields, 'retention deleted STATUS calls past the newest their network keeps');
  }
}

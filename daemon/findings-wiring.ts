/**
 * The findings that need the calls alone (DEL and ADD loops, store/findings/call-loops.ts)
 * on a timer of their own, so they are looked for whether or not CNI caches
 * are watched, and the findings log's read side for the API.
 */

import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import { createFindingsReader, type FindingsReader, createCallLoopDetector, createLeftBehindCheck, toStoreError } from '../store/index.js';
import { kernelHas } from './kernel-objects.js';

/** Loops last minutes to forever: a look every few seconds is soon enough and costs nothing between failures. */
const DETECT_INTERVAL_MS = 5_000;

export interface FindingsWiring {
  readonly reader: FindingsReader;
  start(): void;
  stop(): void;
}

export function createFindingsWiring(db: Database, file: string, log: Logger): FindingsWiring {
  const detector = createCallLoopDetector(db);
  const leftBehind = createLeftBehindCheck(db, kernelHas);
  let passes = 0;
  let timer: NodeJS.Timeout | null = null;
  // Say a failing pass once per cause (a full disk fails them all), and when it works again.
  let lastError: string | null = null;
  const detect = () => {
    try {
      detector.detect(Date.now());
      // It asks the kernel (iptables, ip) about what DELs left: every sixth pass, 30 s, is soon enough.
      if (passes++ % 6 === 0) leftBehind.detect(Date.now());
      if (lastError !== null) log.info('looking for DEL/ADD loops works again');
      lastError = null;
    } catch (err) {
      const e = toStoreError(err, file, 'update the DEL/ADD loop findings in');
      if (e.message !== lastError) log.error({ code: e.code, err: e.message }, 'cannot update the DEL/ADD loop findings; retrying');
      lastError = e.message;
    }
  };
  return {
    reader: createFindingsReader(db),
    start() {
      timer ??= setInterval(detect, DETECT_INTERVAL_MS);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
}

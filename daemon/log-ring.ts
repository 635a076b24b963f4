/**
 * The daemon's log: pino JSON on stdout as always, and its last lines kept in
 * memory, so a bundle carries them wherever the log itself goes (the
 * journal, a file, the container runtime's log).
 */

import { pino, type Logger } from 'pino';

/** What a bundle carries of the log. */
export const LOG_LINES_KEPT = 2000;

export interface LogRing {
  write(chunk: string): void;
  /** The last lines, oldest first. */
  lines(): string[];
}

export function createLogRing(max = LOG_LINES_KEPT): LogRing {
  const ring: string[] = [];
  let start = 0;
  return {
    write(chunk) {
      for (const line of chunk.split('\n')) {
        if (line === '') continue;
        if (ring.length < max) ring.push(line);
        else {
          ring[start] = line;
          start = (start + 1) % max;
        }
      }
    },
    lines: () => [...ring.slice(start), ...ring.slice(0, start)],
  };
}

export function createDaemonLogger(level: string): { log: Logger; recentLines: () => string[] } {
  const ring = createLogRing();
  // The logger's own level filters; each stream takes all it is given ('silent' is no stream level).
  const streamLevel = (level === 'silent' ? 'fatal' : level) as pino.Level;
  const log = pino({ level, base: { app: 'cnirec' } }, pino.multistream([{ level: streamLevel, stream: pino.destination(1) }, { level: streamLevel, stream: ring }]));
  return { log, recentLines: () => ring.lines() };
}

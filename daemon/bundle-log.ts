/**
 * A stopped daemon's last log lines, for a bundle made without it: where the
 * ways of running it in the README put them — a log file (scripts/up.sh's
 * /var/log/cnirec.log) or the journal of its systemd unit. A DaemonSet's log
 * lives with the container runtime, out of reach here: the daemon itself
 * carries its lines into bundles while it runs.
 */

import { readFile } from 'node:fs/promises';
import { LOG_LINES_KEPT } from './log-ring.js';
import { run } from './bundle-host.js';

const LOG_FILES = ['/var/log/cnirec.log'];

export async function recentDaemonLog(): Promise<{ lines: readonly string[]; source: string } | null> {
  for (const file of LOG_FILES) {
    const text = await readFile(file, 'utf8').catch(() => null);
    if (text !== null && text.trim() !== '') return { lines: lastLines(text), source: file };
  }
  const journal = await run('journalctl', ['-u', 'cnirec.service', '-n', String(LOG_LINES_KEPT), '-o', 'cat', '--no-pager']);
  if (journal.ok && journal.stdout.trim() !== '' && !/^-- No entries --$/m.test(journal.stdout)) return { lines: lastLines(journal.stdout), source: 'journalctl -u cnirec.service' };
  return null;
}

function lastLines(text: string): string[] {
  return text.split('\n').filter((l) => l !== '').slice(-LOG_LINES_KEPT);
}

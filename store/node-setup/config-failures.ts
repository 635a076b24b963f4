/**
 * The finding "config changed before failures": a network's ADDs started
 * failing after one of its conf files changed. For every conf version that
 * took effect within the window, the top-level ADDs on its network since
 * then (the network named in each call's stdin): when the plugin of the
 * latest failure has not succeeded since that failure, a finding names the
 * change and the diff to look at. (A list's plugins are top-level calls of
 * their own: bridge may succeed where the tuning after it fails, so it is
 * the failing plugin's next success that counts.) It resolves once that
 * plugin succeeds again, a newer version of the file replaces it, or the
 * change leaves the window.
 *
 * Only plugins that ran can fail here: a conf libcni refuses before running
 * a plugin (bad JSON, a missing binary) leaves no call; `cnirec doctor`
 * names those.
 */

import type { Database } from 'better-sqlite3';
import { createFindingsLog, type FindingFields } from '../findings/index.js';
import { createConfHistory } from './conf-history.js';
import { isoFromMs } from '../../lib/index.js';

export const DEFAULT_CONFIG_FAILURE_WINDOW_MS = 30 * 60_000;

const ERROR_MSG = "CASE WHEN json_valid(CAST(stdout AS TEXT)) THEN json_extract(CAST(stdout AS TEXT), '$.msg') END";
const NETWORK = "CASE WHEN json_valid(CAST(stdin AS TEXT)) THEN json_extract(CAST(stdin AS TEXT), '$.name') END";

export const CONFIG_FAILURE_SQL = {
  // Finished top-level ADDs since the change (calls_by_command), with the network of each.
  adds: `
    SELECT id, plugin, ok, exit_code, signal, started_at_us, ${ERROR_MSG} AS error_msg
    FROM calls
    WHERE command = 'ADD' AND started_at_us >= @fromUs AND parent_id IS NULL AND is_version_probe = 0 AND ok IS NOT NULL AND ${NETWORK} = @network
    ORDER BY started_at_us`,
} as const;

interface AddRow {
  id: string;
  plugin: string;
  ok: number;
  exit_code: number | null;
  signal: number | null;
  started_at_us: number;
  error_msg: unknown;
}

export function createConfigFailureDetector(db: Database, opts: { readonly windowMs?: number } = {}): { detect(nowMs: number): void } {
  const windowMs = opts.windowMs ?? DEFAULT_CONFIG_FAILURE_WINDOW_MS;
  const history = createConfHistory(db);
  const findings = createFindingsLog(db);
  const adds = db.prepare<{ fromUs: number; network: string }, AddRow>(CONFIG_FAILURE_SQL.adds);

  const detect = db.transaction((nowMs: number) => {
    const found = new Map<string, FindingFields>();
    for (const v of history.changedSince(nowMs - windowMs)) {
      if (v.network === null || v.supersededAtMs !== null) continue;
      const calls = adds.all({ fromUs: v.validFromMs * 1000, network: v.network });
      const failed = calls.filter((c) => c.ok === 0);
      const last = failed.at(-1);
      if (!last || calls.some((c) => c.ok === 1 && c.plugin === last.plugin && c.started_at_us > last.started_at_us)) continue;
      const before = history.previousOf(v.id);
      const change = before ? `changed (version ${before.id} → ${v.id})` : `appeared (version ${v.id})`;
      const diff = before ? `cnirec config diff ${before.id} ${v.id}` : `cnirec config show ${v.id}`;
      found.set(`${v.path}#${v.id}`, {
        message:
          `ADD on network "${v.network}" failed ${failed.length} time${failed.length === 1 ? '' : 's'} and has not succeeded since ${v.path} ${change} at ${isoFromMs(v.validFromMs)}. ` +
          `Last failure: call ${last.id}, ${failureOf(last)}. See what changed with \`${diff}\`; revert or fix the file.`,
        path: v.path,
        network: v.network,
        callId: last.id,
      });
    }
    for (const [subject, fields] of found) findings.open('config-changed-before-failures', subject, fields, nowMs);
    for (const subject of findings.openSubjects('config-changed-before-failures')) if (!found.has(subject)) findings.resolve('config-changed-before-failures', subject, nowMs);
  });
  return { detect: (nowMs) => void detect(nowMs) };
}

function failureOf(c: AddRow): string {
  const how = c.signal !== null ? `${c.plugin} killed by signal ${c.signal}` : `${c.plugin} exited ${c.exit_code ?? '?'}`;
  if (typeof c.error_msg !== 'string' || c.error_msg === '') return how;
  return `${how}: ${c.error_msg.length > 300 ? `${c.error_msg.slice(0, 300)}…` : c.error_msg}`;
}

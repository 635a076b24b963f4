/**
 * `cnirec config history [FILE]`, `cnirec config show ID` and
 * `cnirec config diff ID|FILE [ID]`: the CNI conf dir history the daemon
 * recorded, each version with its hash, network and whether runtimes could
 * load it; one version's bytes (after redaction); a unified diff.
 */

import type { ConfDiffBody, ConfVersionBody } from '../api/index.js';
import { getJson, type ClientOptions } from './api-client.js';
import { ClientError, UsageError } from './errors.js';
import { parseCommand } from './flags.js';
import { bold, dim, green, red, stdout, yellow } from './output.js';
import { neutralise, safe } from './terminal-text.js';

const CONFIG_USAGE = 'usage: cnirec config history [FILE] [--limit N] [--json] | config show ID [--json] | config diff ID|FILE [ID] [--json]';

export async function configCommand(args: string[], client: ClientOptions): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseCommand(rest, { json: { type: 'boolean' }, limit: { type: 'string' } }, CONFIG_USAGE, true);
  switch (sub) {
    case 'history': {
      const q = new URLSearchParams({ limit: values.limit ?? '50' });
      if (positionals[0]) q.set('path', positionals[0]);
      const { items } = await getJson<{ items: ConfVersionBody[] }>(client, `/api/v1/node/cni/conf-versions?${q}`);
      if (values.json) stdout.raw(items.map((v) => `${JSON.stringify(v)}\n`).join(''));
      else stdout.lines(formatHistory(items));
      return 0;
    }
    case 'show': {
      const id = versionId(positionals[0]);
      const v = await getJson<ConfVersionBody & { text: string | null; base64: string | null }>(client, `/api/v1/node/cni/conf-versions/${id}`);
      if (values.json) stdout.raw(`${JSON.stringify(v, null, 2)}\n`);
      // A file from the node, read by a person: control characters shown, not acted on (--json has the exact bytes).
      else stdout.raw(neutralise(v.text ?? (v.base64 !== null ? `(not UTF-8 text; base64) ${v.base64}\n` : `(not read: ${v.parseError ?? v.kind})\n`), { multiline: true }));
      return 0;
    }
    case 'diff': {
      const [a, b] = positionals;
      if (a === undefined) throw new UsageError('config diff needs a version id (cnirec config history lists them) or a conf file path', CONFIG_USAGE);
      const to = a.startsWith('/') ? await latestOf(client, a) : versionId(b ?? a);
      const from = a.startsWith('/') ? null : b === undefined ? null : versionId(a);
      const d = await getJson<ConfDiffBody>(client, `/api/v1/node/cni/conf-versions/${to}/diff${from === null ? '' : `?against=${from}`}`);
      if (values.json) stdout.raw(`${JSON.stringify(d, null, 2)}\n`);
      else {
        if (d.from === null) stdout.line(dim(`version ${d.to.id} is the first recorded version of ${safe(d.to.path)}`));
        stdout.raw(neutralise(d.diff, { multiline: true }));
      }
      return 0;
    }
    default:
      throw new UsageError(sub === undefined ? 'config needs a subcommand: history, show or diff' : `unknown config subcommand "${sub}" (history, show, diff)`, CONFIG_USAGE);
  }
}

function versionId(s: string | undefined): number {
  const n = Number(s);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`"${s ?? ''}" is not a conf version id (cnirec config history lists them)`, CONFIG_USAGE);
  return n;
}

async function latestOf(client: ClientOptions, path: string): Promise<number> {
  const { items } = await getJson<{ items: ConfVersionBody[] }>(client, `/api/v1/node/cni/conf-versions?${new URLSearchParams({ path, limit: '1' })}`);
  const v = items[0];
  if (!v) throw new ClientError(`no version of ${safe(path)} is recorded (is it in a conf dir the daemon follows?)`);
  return v.id;
}

/** Versions as terminal lines, newest first. Pure, for tests. */
export function formatHistory(items: readonly ConfVersionBody[]): string[] {
  if (items.length === 0) return [dim('no conf file versions recorded')];
  return items.map((v) => {
    const state = v.removedAt ? yellow(`removed ${v.removedAt}`) : v.supersededAt ? dim(`replaced ${v.supersededAt}`) : green('current');
    const what = v.parseError ? red(safe(v.parseError)) : `network "${safe(v.network ?? '?')}"${v.cniVersion ? ` cniVersion ${safe(v.cniVersion)}` : ''} ${dim(v.types.map(safe).join(' '))}`;
    return `${bold(`#${v.id}`.padEnd(6))} ${dim(v.validFrom)}  ${safe(v.path)}  ${state}  ${dim(v.sha256 ? v.sha256.slice(0, 12) : v.kind)}  ${what}`;
  });
}

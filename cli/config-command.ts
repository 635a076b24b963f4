/**
 * `cnirec config history [FILE]`, `cnirec config show ID` and
 * `cnirec config diff ID|FILE [ID]`: the CNI conf dir history the daemon
 * recorded, each version with its hash, network and whether runtimes could
 * load it; one version's bytes (after redaction); a unified diff.
 */

import { parseArgs } from 'node:util';
import type { ConfDiffBody, ConfVersionBody } from '../api/index.js';
import { ClientError, getJson, type ClientOptions } from './api-client.js';
import { UsageError } from './usage-error.js';
import { bold, dim, green, red, yellow } from './format.js';

export async function configCommand(args: string[], client: ClientOptions): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({ args: rest, options: { json: { type: 'boolean' }, limit: { type: 'string' } }, allowPositionals: true, strict: true });
  switch (sub) {
    case 'history': {
      const q = new URLSearchParams({ limit: values.limit ?? '50' });
      if (positionals[0]) q.set('path', positionals[0]);
      const { items } = await getJson<{ items: ConfVersionBody[] }>(client, `/api/v1/node/cni/conf-versions?${q}`);
      if (values.json) for (const v of items) process.stdout.write(`${JSON.stringify(v)}\n`);
      else process.stdout.write(`${formatHistory(items).join('\n')}\n`);
      return 0;
    }
    case 'show': {
      const id = versionId(positionals[0]);
      const v = await getJson<ConfVersionBody & { text: string | null; base64: string | null }>(client, `/api/v1/node/cni/conf-versions/${id}`);
      if (values.json) process.stdout.write(`${JSON.stringify(v, null, 2)}\n`);
      else process.stdout.write(v.text ?? (v.base64 !== null ? `(not UTF-8 text; base64) ${v.base64}\n` : `(not read: ${v.parseError ?? v.kind})\n`));
      return 0;
    }
    case 'diff': {
      const [a, b] = positionals;
      if (a === undefined) throw new UsageError('config diff needs a version id (cnirec config history lists them) or a conf file path');
      const to = a.startsWith('/') ? await latestOf(client, a) : versionId(b ?? a);
      const from = a.startsWith('/') ? null : b === undefined ? null : versionId(a);
      const d = await getJson<ConfDiffBody>(client, `/api/v1/node/cni/conf-versions/${to}/diff${from === null ? '' : `?against=${from}`}`);
      if (values.json) process.stdout.write(`${JSON.stringify(d, null, 2)}\n`);
      else process.stdout.write(d.from === null ? `${dim(`version ${d.to.id} is the first recorded version of ${d.to.path}`)}\n${d.diff}` : d.diff);
      return 0;
    }
    default:
      throw new UsageError(sub === undefined ? 'config needs a subcommand: history, show or diff' : `unknown config subcommand "${sub}" (history, show, diff)`);
  }
}

function versionId(s: string | undefined): number {
  const n = Number(s);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`"${s ?? ''}" is not a conf version id (cnirec config history lists them)`);
  return n;
}

async function latestOf(client: ClientOptions, path: string): Promise<number> {
  const { items } = await getJson<{ items: ConfVersionBody[] }>(client, `/api/v1/node/cni/conf-versions?${new URLSearchParams({ path, limit: '1' })}`);
  const v = items[0];
  if (!v) throw new ClientError(`no version of ${path} is recorded (is it in a conf dir the daemon follows?)`);
  return v.id;
}

/** Versions as terminal lines, newest first. Pure, for tests. */
export function formatHistory(items: readonly ConfVersionBody[]): string[] {
  if (items.length === 0) return [dim('no conf file versions recorded')];
  return items.map((v) => {
    const state = v.removedAt ? yellow(`removed ${v.removedAt}`) : v.supersededAt ? dim(`replaced ${v.supersededAt}`) : green('current');
    const what = v.parseError ? red(v.parseError) : `network "${v.network ?? '?'}"${v.cniVersion ? ` cniVersion ${v.cniVersion}` : ''} ${dim(v.types.join(' '))}`;
    return `${bold(`#${v.id}`.padEnd(6))} ${dim(v.validFrom)}  ${v.path}  ${state}  ${dim(v.sha256 ? v.sha256.slice(0, 12) : v.kind)}  ${what}`;
  });
}

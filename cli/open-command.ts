/**
 * `cnirec open FILE`: serves a bundle read-only — the web view, the API, and
 * so `cnirec calls|show|pod|findings|replay|mcp --api …` — on a laptop,
 * without root, bpftrace or a CNI setup, until Ctrl-C. Nothing live: no
 * tail of new calls, no capture switch, no doctor of this machine.
 */

import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import { createRedactor, DEFAULT_REDACT_KEYS, DEFAULT_REDACT_KEYS_EXCEPT, compileKeyPatterns } from '../collector/index.js';
import { parseListen, serveBundle } from '../daemon/index.js';
import { UsageError } from './errors.js';
import { parseCommand } from './flags.js';
import { stdout } from './output.js';

export const OPEN_USAGE = `usage: cnirec open FILE.tar.gz [--listen HOST:PORT] [--token-file FILE]
  Serves a bundle made by cnirec bundle, read-only: the web view and the API (default 127.0.0.1:7070),
  which the other commands read with --api (cnirec calls, show, pod, findings, replay, mcp).`;

export async function openCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, { listen: { type: 'string' }, 'token-file': { type: 'string' } }, OPEN_USAGE, true);
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'which bundle? give its file' : 'one bundle at a time', OPEN_USAGE);
  const listenText = values.listen ?? process.env.CNIREC_LISTEN ?? '127.0.0.1:7070';
  const listen = parseListen(listenText);
  if (listen === null) throw new UsageError(`--listen takes HOST:PORT (e.g. 127.0.0.1:7070), not "${listenText}"`, OPEN_USAGE);
  const token = readToken(values['token-file'] ?? process.env.CNIREC_TOKEN_FILE);
  if (!listen.loopback && token === null) throw new UsageError(`listening on ${listen.host} (beyond loopback) requires an API token: set --token-file`, OPEN_USAGE);

  // Errors only: a bundle has no collector, and the API saying so at start-up would be noise here.
  const log = pino({ level: 'error', base: { app: 'cnirec' } }, pino.destination(2));
  const redactor = createRedactor({ keys: compileKeyPatterns([...DEFAULT_REDACT_KEYS]), keysExcept: compileKeyPatterns([...DEFAULT_REDACT_KEYS_EXCEPT]), pointers: [] });
  const served = await serveBundle(positionals[0]!, { listen, token, log, redactor });
  const m = served.manifest;
  const filters = [...m.filters.pods.map((p) => `${p.namespace}/${p.name}`), ...m.filters.calls.map((c) => `call ${c}`)];
  const api = served.url.replace('0.0.0.0', '127.0.0.1');
  stdout.lines([
    `cnirec: bundle of node ${m.node} taken at ${m.takenAt} by cnirec ${m.cnirec}: ${(m.rows.calls ?? 0).toLocaleString('en-US')} calls from ${m.window.since} to ${m.window.until}` +
      (filters.length > 0 ? `, of ${filters.join(', ')}` : ''),
    ...(m.payloads.kept !== 'all' ? [`  payloads ${m.payloads.kept}${m.payloads.why ? ` (${m.payloads.why})` : ''}`] : []),
    ...(m.daemon.answered ? [] : ['  the daemon did not answer when it was taken: no health, settings or metrics of it']),
    ...(served.upgradedFrom !== null ? [`  its record (schema ${served.upgradedFrom}) was upgraded to this cnirec's in a private copy`] : []),
    `  web view  ${api}/`,
    `  commands  cnirec calls --api ${api}   (or: export CNIREC_API=${api}; then cnirec pod NS/NAME, show ID, findings, replay ID, mcp)`,
    'Ctrl-C stops it (and removes its private copy of the bundle).',
  ]);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await served.close();
  return 0;
}

function readToken(file: string | undefined): string | null {
  if (file === undefined || file === '') return null;
  let token: string;
  try {
    token = readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw new UsageError(`cannot read --token-file ${file}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}`);
  }
  if (!token) throw new UsageError(`--token-file ${file} is empty`);
  return token;
}

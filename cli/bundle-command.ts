/**
 * `cnirec bundle`: the node's CNI story in one file, for whoever can help.
 * When the daemon answers it makes the bundle (GET /api/v1/bundle: its
 * database, its settings, health and log); when none does, or --db is given,
 * the bundle is made here from the database read-only, with the node's files
 * read the same way and the container runtime asked directly (as `cnirec
 * doctor` and `cnirec gc` do, a short deadline on each call). Either way the file is the same kind: `cnirec open` it.
 */

import { createReadStream, createWriteStream } from 'node:fs';
import { copyFile, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { readTimeParam } from '../api/index.js';
import { createRedactor } from '../collector/index.js';
import { bundleFileName, bundleRequest, bundleSetup, loadConfig, makeBundle, parseSize, readBundleManifest, recentDaemonLog, type BundleManifest, type SettingName } from '../daemon/index.js';
import { download, DaemonUnreachable, route, type ClientOptions } from './api-client.js';
import { ClientError, UsageError } from './errors.js';
import { parseCommand, podFlag } from './flags.js';
import { stderr } from './output.js';

export const BUNDLE_USAGE = `usage: cnirec bundle [--since T] [--until T] [--pod NS/NAME]... [--pod-uid UID] [--call ID]...
                     [-o FILE | -o -] [--max-size SIZE] [--no-payloads] [--db FILE] [--cri-endpoint PATH|none]
  The record of the last 6 hours (--since), of these pods or calls when given, with the node's CNI setup,
  the container runtime's side, the daemon's health, settings and log: one .tar.gz to hand over (open it
  with cnirec open FILE). With no daemon answering, the runtime is asked directly (--cri-endpoint).`;

/** A bundle takes seconds to make on a busy node: more than a request's --timeout. */
const MIN_BUNDLE_TIMEOUT_MS = 10 * 60_000;

export async function bundleCommand(args: string[], client: ClientOptions): Promise<number> {
  const { values, positionals } = parseCommand(
    args,
    {
      since: { type: 'string' },
      until: { type: 'string' },
      pod: { type: 'string', multiple: true },
      'pod-uid': { type: 'string' },
      call: { type: 'string', multiple: true },
      output: { type: 'string', short: 'o' },
      'max-size': { type: 'string' },
      'no-payloads': { type: 'boolean' },
      db: { type: 'string' },
      'cri-endpoint': { type: 'string' },
    },
    BUNDLE_USAGE,
    true,
  );
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`, BUNDLE_USAGE);
  const pods = (values.pod ?? []).map((p) => {
    const { namespace, name } = podFlag(p, '--pod', BUNDLE_USAGE);
    return `${namespace}/${name}`;
  });
  if (values['pod-uid'] !== undefined && pods.length !== 1) throw new UsageError('--pod-uid narrows one pod: give exactly one --pod', BUNDLE_USAGE);
  const nowMs = Date.now();
  const since = timeFlag(values.since, '--since', nowMs);
  const until = timeFlag(values.until, '--until', nowMs);
  if (since !== undefined && until !== undefined && until <= since) throw new UsageError('--until must be later than --since', BUNDLE_USAGE);
  const maxBytes = sizeFlag(values['max-size']);
  const ask = { sinceUs: since, untilUs: until, pods, podUid: values['pod-uid'], calls: values.call ?? [], payloads: !values['no-payloads'], maxBytes };

  const out = values.output;
  if (values.db === undefined) {
    const query = { since: values.since, until: values.until, pod: pods.join(',') || undefined, podUid: values['pod-uid'], call: (values.call ?? []).join(',') || undefined, payloads: values['no-payloads'] ? 'false' : undefined, maxBytes };
    try {
      return await fromDaemon(client, route('/api/v1/bundle', query), out);
    } catch (err) {
      if (!(err instanceof DaemonUnreachable)) throw err;
      stderr.line(`cnirec: no daemon answers at ${client.api}: making the bundle from its database alone`);
    }
  }
  const config = loadConfig(localFlags(values.db, values['cri-endpoint']), process.env);
  const setup = { ...bundleSetup(config, createRedactor({ keys: config.redactKeys, keysExcept: config.redactKeysExcept, pointers: config.redactPointers })), fallbackLog: recentDaemonLog };
  const request = bundleRequest(ask, nowMs);
  const made = await makeBundle(request, setup, null, nowMs);
  try {
    const target = out ?? bundleFileName(setup.node, request, nowMs);
    if (target === '-') await pipeline(createReadStream(made.file), process.stdout);
    else await copyFile(made.file, target);
    report(target, made.manifest);
  } finally {
    await made.cleanup();
  }
  return 0;
}

/** The daemon makes it; the file is streamed to -o (or the name the daemon gives, or stdout). */
async function fromDaemon(client: ClientOptions, path: string, out: string | undefined): Promise<number> {
  const patient = { ...client, timeoutMs: Math.max(client.timeoutMs, MIN_BUNDLE_TIMEOUT_MS) };
  let target = out ?? 'cnirec-bundle.tar.gz';
  await download(patient, path, async (body, res) => {
    target = out ?? /filename="([^"/]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? target;
    const from = Readable.fromWeb(body as import('node:stream/web').ReadableStream<Uint8Array>);
    if (target === '-') return pipeline(from, process.stdout);
    try {
      await pipeline(from, createWriteStream(target, { mode: 0o600 }));
    } catch (err) {
      await rm(target, { force: true });
      throw new ClientError(`the bundle could not be written to ${target}: ${(err as Error).message}`);
    }
  });
  report(target, target === '-' ? null : await readBundleManifest(target));
  return 0;
}

function report(target: string, manifest: BundleManifest | null): void {
  if (target === '-') return;
  if (manifest === null) return stderr.line(`cnirec: wrote ${target}; open it with: cnirec open ${target}`);
  const calls = manifest.rows.calls ?? 0;
  const bytes = manifest.files.reduce((n, f) => n + f.bytes, 0);
  stderr.line(
    `cnirec: wrote ${target}: node ${manifest.node}, ${calls.toLocaleString('en-US')} calls from ${manifest.window.since} to ${manifest.window.until}, ` +
      `payloads ${manifest.payloads.kept}${manifest.daemon.answered ? '' : ', without the daemon (it did not answer)'} (${(bytes / 1024 / 1024).toFixed(1)} MiB unpacked)`,
  );
  stderr.line(`cnirec: open it anywhere with: cnirec open ${target}`);
}

function timeFlag(text: string | undefined, flag: string, nowMs: number): number | undefined {
  if (text === undefined) return undefined;
  const r = readTimeParam(text, nowMs);
  if (!r.ok) throw new UsageError(`${flag}: ${r.message}`, BUNDLE_USAGE);
  return r.us;
}

function sizeFlag(text: string | undefined): number | null {
  if (text === undefined) return null;
  const r = parseSize(text);
  if (!r.ok || r.value < 64 * 1024) throw new UsageError(`--max-size takes a size of at least 64KiB (e.g. 20MiB, 1GiB), not "${text}"`, BUNDLE_USAGE);
  return r.value;
}

/** The daemon's settings a bundle made here needs, from --db, --cri-endpoint and CNIREC_* as for `run`. */
function localFlags(db: string | undefined, criEndpoint: string | undefined): Partial<Record<SettingName, string>> {
  return { ...(db === undefined ? {} : { db }), ...(criEndpoint === undefined ? {} : { criEndpoint }) };
}


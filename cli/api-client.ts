/**
 * The CLI's side of the v1 contract: small typed requests to a running
 * daemon. The types are the API's own (api/index.ts, inferred from the
 * schemas that shape its answers), so the CLI cannot drift from what the
 * daemon sends. Every failure ends as one ClientError saying what to do:
 * no daemon at that address, no answer in time, a refusal (its message
 * already names the offending field), or a server that is not cnirec.
 */

import { BUNDLE_HEADER } from '../api/index.js';
import { ClientError } from './errors.js';
import { stderr } from './output.js';

export type * from '../api/index.js';

export interface ClientOptions {
  /** Base URL, e.g. http://127.0.0.1:7070 */
  readonly api: string;
  readonly token: string | null;
  /** How long a request may take before the CLI gives up (ms). */
  readonly timeoutMs: number;
}

export const DEFAULT_API = 'http://127.0.0.1:7070';
export const DEFAULT_TIMEOUT_MS = 30_000;

export function headers(opts: Pick<ClientOptions, 'token'>): Record<string, string> {
  return opts.token ? { authorization: `Bearer ${opts.token}` } : {};
}

export async function getJson<T>(opts: ClientOptions, path: string): Promise<T> {
  const res = await request(opts, path);
  if (!isJson(res)) throw notCnirec(opts, res);
  try {
    return (await res.json()) as T;
  } catch {
    throw notCnirec(opts, res);
  }
}

export async function getText(opts: ClientOptions, path: string): Promise<string> {
  return (await request(opts, path)).text();
}

/** `path` with its query, leaving out absent values. */
export function route(path: string, query: Record<string, string | number | boolean | undefined | null> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== false) q.set(k, String(v));
  return q.size > 0 ? `${path}?${q}` : path;
}

/** PUT a JSON body; the daemon's JSON answer back. */
export async function putJson<T>(opts: ClientOptions, path: string, body: unknown): Promise<T> {
  const res = await request(opts, path, { method: 'PUT', body: JSON.stringify(body) });
  if (!isJson(res)) throw notCnirec(opts, res);
  return (await res.json()) as T;
}

/** The bundle the answers come from (an API served by `cnirec open`); null while they come from a live node. */
export interface BundleSource {
  readonly node: string;
  readonly takenAt: string;
}

/** By API address: the bundles that answered. */
const bundleSources = new Map<string, BundleSource>();

/** Whether the server at `opts.api` answered as an opened bundle, and of which node and time. */
export function answeredFromBundle(opts: Pick<ClientOptions, 'api'>): BundleSource | null {
  return bundleSources.get(opts.api) ?? null;
}

/** Notes, once per address, that the answers come from a bundle: its node and time, not a live node. */
function noteSource(opts: ClientOptions, res: Response): void {
  if (bundleSources.has(opts.api)) return;
  const header = res.headers.get(BUNDLE_HEADER);
  if (header === null) return;
  const fields = new Map(header.split(';').map((p) => p.trim().split('=') as [string, string]));
  const source = { node: decodeURIComponent(fields.get('node') ?? ''), takenAt: fields.get('taken-at') ?? '' };
  bundleSources.set(opts.api, source);
  stderr.line(`cnirec: reading a bundle of node ${source.node} taken at ${source.takenAt} (cnirec open), not a live node`);
}

/** GET a file (a bundle) into `write`; the daemon's refusal or absence as for every request. */
export async function download(opts: ClientOptions, path: string, write: (body: ReadableStream<Uint8Array>, res: Response) => Promise<void>): Promise<void> {
  const res = await request(opts, path);
  if (res.body === null) throw notCnirec(opts, res);
  await write(res.body, res);
}

async function request(opts: ClientOptions, path: string, send?: { method: 'PUT'; body: string }): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(new URL(path, opts.api), {
      headers: { ...headers(opts), ...(send ? { 'content-type': 'application/json' } : {}) },
      ...(send ?? {}),
      signal: AbortSignal.timeout(opts.timeoutMs),
    });
  } catch (err) {
    throw unreachable(opts, err);
  }
  noteSource(opts, res);
  if (res.ok) return res;
  const body = isJson(res) ? ((await res.json().catch(() => null)) as { error?: { message?: unknown } } | null) : null;
  const message = typeof body?.error?.message === 'string' ? body.error.message : null;
  if (message === null) throw notCnirec(opts, res);
  throw new ClientError(res.status === 401 ? `${message} (pass --token or set CNIREC_TOKEN)` : message);
}

const isJson = (res: Response): boolean => /^application\/(?:[\w.+-]+\+)?json\b/i.test(res.headers.get('content-type') ?? '');

function notCnirec(opts: ClientOptions, res: Response): ClientError {
  const type = res.headers.get('content-type') ?? 'no content type';
  return new ClientError(`the server at ${opts.api} answered HTTP ${res.status} (${type}), not as a cnirec daemon does: is --api the daemon's address?`);
}

/** Why fetch failed, in the words of its cause (connection refused, no such host, timed out). */
export function unreachable(opts: ClientOptions, err: unknown): ClientError {
  const e = err as { name?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError') {
    return new ClientError(`the daemon at ${opts.api} did not answer within ${opts.timeoutMs / 1000}s (--timeout): it may be overloaded, or the address may lead elsewhere`);
  }
  const why = e?.cause?.code ?? e?.cause?.message ?? (err instanceof Error ? err.message : String(err));
  return new DaemonUnreachable(`no cnirec daemon answers at ${opts.api} (${why}): start it (sudo cnirec run) or pass --api URL`);
}

/** Nothing listens at the address (as opposed to a daemon that answered, or was too slow to). */
export class DaemonUnreachable extends ClientError {}

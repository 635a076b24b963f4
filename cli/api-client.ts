/**
 * The CLI's side of the v1 contract: small typed calls to a running daemon.
 * The daemon's address and token come from flags or CNIREC_API / CNIREC_TOKEN.
 */

export interface ClientOptions {
  /** Base URL, e.g. http://127.0.0.1:7070 */
  readonly api: string;
  readonly token: string | null;
}

/** The daemon answered with an error, or could not be reached: a message for the terminal. */
export class ClientError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ClientError';
  }
}

export interface CallSummaryView {
  id: string;
  command: string | null;
  plugin: string;
  pid: number;
  parentId: string | null;
  parentProcess: { pid: number; comm: string | null } | null;
  containerId: string | null;
  netns: string | null;
  ifname: string | null;
  pod: { namespace: string; name: string; uid: string | null } | null;
  startedAt: string;
  endedAt: string | null;
  durationMs: number | null;
  exitCode: number | null;
  signal: number | null;
  ok: boolean | null;
  status: string;
  incompleteReason: string | null;
  isVersionProbe: boolean;
}

export interface PayloadView {
  text: string | null;
  base64: string;
  bytes: number;
  truncated: boolean;
  /** Absent from daemons that predate redaction. */
  redacted?: boolean;
  redactedPointers?: string[];
}

export interface HelperView {
  pid: number;
  path: string;
  argv: string[];
  durationMs: number | null;
  exitCode: number | null;
  signal: number | null;
  stderr?: PayloadView;
}

export interface CallDetailView extends CallSummaryView {
  argv: string[];
  env: Record<string, string>;
  stdin: PayloadView;
  stdout: PayloadView;
  stderr: PayloadView;
  children: CallSummaryView[];
  helpers: HelperView[];
}

export function headers(opts: ClientOptions): Record<string, string> {
  return opts.token ? { authorization: `Bearer ${opts.token}` } : {};
}

export async function getJson<T>(opts: ClientOptions, path: string): Promise<T> {
  const res = await request(opts, path);
  return (await res.json()) as T;
}

export async function getText(opts: ClientOptions, path: string): Promise<string> {
  return (await request(opts, path)).text();
}

async function request(opts: ClientOptions, path: string): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(new URL(path, opts.api), { headers: headers(opts) });
  } catch {
    throw new ClientError(`no cnirec daemon answers at ${opts.api}: start it (sudo npx cnirec run) or pass --api URL`);
  }
  if (!res.ok) {
    const body = (await res.json().catch(() => null)) as { error?: { message?: string; issues?: Array<{ path: string; message: string }> } } | null;
    const issues = body?.error?.issues?.map((i) => `${i.path}: ${i.message}`).join('; ');
    throw new ClientError(`${res.status} ${body?.error?.message ?? res.statusText}${issues ? ` (${issues})` : ''}`);
  }
  return res;
}

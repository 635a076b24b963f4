/**
 * The real CLI (bin/cnirec.js, as built) against the API served on a real
 * port, in-process over a real SQLite store: what a person types, what they
 * read and the exit code they get. `tty: true` runs it under `script`, so
 * its stdout is a terminal (a pseudo-terminal) as at 3 a.m.
 */

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { startApi, type ApiHarness, type HarnessOptions } from './api-harness.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
export const CLI = path.join(ROOT, 'bin/cnirec.js');

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface ServedApi extends ApiHarness {
  readonly url: string;
}

export async function serveApi(options: HarnessOptions = {}): Promise<ServedApi> {
  if (!existsSync(path.join(ROOT, 'dist/cli/main.js'))) throw new Error('dist/ is missing: run `npm run build` (npm test does) before the CLI tests');
  const h = await startApi(options);
  const url = await h.app.listen({ host: '127.0.0.1', port: 0 });
  return Object.assign(h, { url });
}

export interface RunOptions {
  readonly api?: string | null;
  readonly env?: Readonly<Record<string, string>>;
  /** Under `script`: stdout and stderr are a terminal. */
  readonly tty?: boolean;
  readonly timeoutMs?: number;
  /** For a command that follows (tail): stopped with SIGTERM after this long, by coreutils' timeout, inside `script` too. */
  readonly stopAfterMs?: number;
}

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/** Runs `cnirec …args`, asynchronously: the API it talks to lives in this process. */
export function cnirec(args: readonly string[], opts: RunOptions = {}): Promise<CliResult> {
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/root',
    ...(opts.api ? { CNIREC_API: opts.api } : {}),
    ...opts.env,
  };
  const command = [...(opts.stopAfterMs ? ['timeout', `${opts.stopAfterMs / 1000}`] : []), process.execPath, CLI, ...args];
  const [file, argv] = opts.tty ? ['script', ['-qfec', command.map(quote).join(' '), '/dev/null']] : [command[0]!, command.slice(1)];
  return new Promise((resolve) => {
    execFile(file, argv, { env, timeout: opts.timeoutMs ?? 30_000, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : -1;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs a shell pipeline (bash), `$CNIREC` standing for the CLI; answers each command's exit status too. */
export function pipeline(script: string, api: string): Promise<CliResult & { statuses: number[] }> {
  const full = `CNIREC="${process.execPath} ${CLI}"; ${script}; echo "PIPESTATUS=\${PIPESTATUS[*]}" >&2`;
  return new Promise((resolve) => {
    execFile('bash', ['--noprofile', '--norc', '-c', full], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', CNIREC_API: api }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const statuses = (/PIPESTATUS=([\d ]+)/.exec(stderr)?.[1] ?? '').trim().split(' ').map(Number);
      resolve({ code: err === null ? 0 : ((err as { code?: number }).code ?? -1), stdout, stderr: stderr.replace(/PIPESTATUS=.*\n?/, ''), statuses });
    });
  });
}

/** Every escape sequence in `text`, and whether it is one of the CLI's own colours (SGR 0, 1, 2, 31, 32, 33). */
export function escapeSequences(text: string): { own: number; foreign: string[] } {
  // eslint-disable-next-line no-control-regex -- finding escapes is the point
  const all = [...text.matchAll(/\u001b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|.)/g)].map((m) => m[0]);
  // eslint-disable-next-line no-control-regex -- the same
  const own = all.filter((e) => /^\u001b\[(?:0|1|2|31|32|33)m$/.test(e));
  return { own: own.length, foreign: all.filter((e) => !own.includes(e)) };
}

// Small process helpers shared by the e2e support modules.
import { spawn } from 'node:child_process';

export interface RunResult {
  stdout: string;
  stderr: string;
  /** Exit code, or null when the process was ended by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  durationMs: number;
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  input?: string | Buffer;
  /** Kill the process (SIGKILL) after this many ms. Default 120 s. */
  timeoutMs?: number;
}

/** Sane PATH for helper tools; does not depend on the caller's shell setup. */
export const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Runs a command without a shell; never rejects on a non-zero exit (only on spawn failure). */
export function run(cmd: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  const started = performance.now();
  return new Promise<RunResult>((resolve, reject) => {
    const child = spawn(cmd, [...args], {
      env: opts.env ?? { ...process.env, PATH: process.env.PATH ?? SYSTEM_PATH },
      cwd: opts.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.stdin.on('error', () => undefined); // EPIPE if the command does not read stdin
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`failed to run ${cmd}: ${e.message}`, { cause: e }));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        code,
        signal,
        durationMs: performance.now() - started,
      });
    });
    child.stdin.end(opts.input ?? '');
  });
}

/** Like run() but rejects with stdout/stderr in the message when the exit code is not 0. */
export async function runOk(cmd: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  const r = await run(cmd, args, opts);
  if (r.code !== 0) {
    throw new Error(
      `${cmd} ${args.join(' ')} failed (code=${String(r.code)} signal=${String(r.signal)})\n` +
        `stdout: ${r.stdout.trim()}\nstderr: ${r.stderr.trim()}`,
    );
  }
  return r;
}

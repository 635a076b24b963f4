// Executes a CNI plugin binary the way libcni does (pkg/invoke):
//   - argv is only the plugin path (no arguments),
//   - the call is described by CNI_* environment variables,
//   - the network configuration is written to stdin, which is then closed,
//   - the result (or a CNI error object) comes back on stdout; stderr is free-form logging.
// Unlike libcni we do not inherit the caller's whole environment: a minimal PATH plus the CNI_*
// variables keeps what the tracer sees small and deterministic.
import { spawn, type ChildProcess } from 'node:child_process';
import { SYSTEM_PATH } from './proc.js';

export const CNI_BIN_DIR = '/usr/lib/cni';

export type CniCommand = 'ADD' | 'DEL' | 'CHECK' | 'VERSION' | 'STATUS' | 'GC' | (string & {});

export interface ExecPluginOptions {
  /** Absolute path of the plugin executable. */
  plugin: string;
  command: CniCommand;
  containerId: string;
  /** Path of the network namespace (e.g. /var/run/netns/foo). */
  netns: string;
  ifname: string;
  /** CNI_ARGS; defaults to the empty string. See podCniArgs(). */
  cniArgs?: string;
  /** CNI_PATH; defaults to /usr/lib/cni. */
  cniPath?: string;
  stdin: Buffer | string;
  /** Arguments after argv[0] (libcni passes none; a caller that runs `sh -c '…'` does). */
  args?: readonly string[];
  /** argv[0]; the plugin's path unless said (a caller may pass any name). */
  argv0?: string;
  /** The working directory the plugin starts in; the test's own unless said. */
  cwd?: string;
  /** Added to (and able to override) the base environment. */
  extraEnv?: Record<string, string>;
  /** Send `signal` (default SIGKILL) to the plugin this many ms after it was spawned. */
  killAfterMs?: number;
  signal?: NodeJS.Signals;
  /**
   * After the plugin exited, wait at most this long for stdout/stderr to reach EOF (a killed
   * script's orphaned children can keep the pipes open). Default 1000 ms.
   */
  drainTimeoutMs?: number;
  /** Called synchronously right after spawn, e.g. to inspect /proc/<pid>. */
  onSpawn?: (child: ChildProcess) => void;
}

export interface ExecPluginResult {
  stdout: Buffer;
  stderr: Buffer;
  exitCode: number | null;
  signal: string | null;
  pid: number;
  /** Exactly the bytes written to the plugin's stdin. */
  stdinBytes: Buffer;
  /** The environment the plugin was started with. */
  env: Record<string, string>;
  durationMs: number;
}

/** The environment libcni would set for this call (on top of our minimal base). */
export function pluginEnv(opts: ExecPluginOptions): Record<string, string> {
  return {
    PATH: SYSTEM_PATH,
    CNI_COMMAND: opts.command,
    CNI_CONTAINERID: opts.containerId,
    CNI_NETNS: opts.netns,
    CNI_IFNAME: opts.ifname,
    CNI_ARGS: opts.cniArgs ?? '',
    CNI_PATH: opts.cniPath ?? CNI_BIN_DIR,
    ...(opts.extraEnv ?? {}),
  };
}

export function execPlugin(opts: ExecPluginOptions): Promise<ExecPluginResult> {
  const stdinBytes = Buffer.isBuffer(opts.stdin) ? Buffer.from(opts.stdin) : Buffer.from(opts.stdin, 'utf8');
  const env = pluginEnv(opts);
  const started = performance.now();

  return new Promise<ExecPluginResult>((resolve, reject) => {
    let child: ChildProcess;
    try {
      // argv0 = path and no arguments: argv is exactly [plugin], as with Go's exec.Cmd{Path, Args: [path]}.
      child = spawn(opts.plugin, opts.args ?? [], { argv0: opts.argv0 ?? opts.plugin, env, stdio: ['pipe', 'pipe', 'pipe'], ...(opts.cwd ? { cwd: opts.cwd } : {}) });
    } catch (e) {
      reject(e instanceof Error ? e : new Error(String(e)));
      return;
    }
    const { stdin, stdout, stderr } = child;
    if (!stdin || !stdout || !stderr) {
      reject(new Error('spawn did not create stdio pipes'));
      return;
    }
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    stdout.on('data', (b: Buffer) => out.push(b));
    stderr.on('data', (b: Buffer) => err.push(b));
    // A plugin that exits (or is killed) without reading stdin gives EPIPE; that is not our failure.
    stdin.on('error', () => undefined);

    let killTimer: NodeJS.Timeout | undefined;
    let drainTimer: NodeJS.Timeout | undefined;
    let settled = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let openStreams = 2;

    const finish = (): void => {
      if (settled || !exit) return;
      settled = true;
      clearTimeout(killTimer);
      clearTimeout(drainTimer);
      resolve({
        stdout: Buffer.concat(out),
        stderr: Buffer.concat(err),
        exitCode: exit.code,
        signal: exit.signal,
        pid: child.pid ?? -1,
        stdinBytes,
        env,
        durationMs: performance.now() - started,
      });
    };
    const onStreamEnd = (): void => {
      openStreams -= 1;
      if (openStreams === 0) finish();
    };
    stdout.on('close', onStreamEnd);
    stderr.on('close', onStreamEnd);

    child.on('error', (e) => {
      if (settled) return;
      settled = true;
      clearTimeout(killTimer);
      clearTimeout(drainTimer);
      reject(new Error(`cannot execute plugin ${opts.plugin}: ${e.message}`, { cause: e }));
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      if (openStreams === 0) {
        finish();
        return;
      }
      drainTimer = setTimeout(() => {
        stdout.destroy();
        stderr.destroy();
        finish();
      }, opts.drainTimeoutMs ?? 1000);
    });

    if (child.pid !== undefined) {
      opts.onSpawn?.(child);
      if (opts.killAfterMs !== undefined) {
        const sig = opts.signal ?? 'SIGKILL';
        killTimer = setTimeout(() => child.kill(sig), opts.killAfterMs);
      }
    }
    stdin.end(stdinBytes);
  });
}

/** CNI_ARGS as the kubelet/CRI runtimes pass them for a pod sandbox. */
export function podCniArgs(ns: string, name: string, uid: string, infraId: string): string {
  return [
    'IgnoreUnknown=1',
    `K8S_POD_NAMESPACE=${ns}`,
    `K8S_POD_NAME=${name}`,
    `K8S_POD_UID=${uid}`,
    `K8S_POD_INFRA_CONTAINER_ID=${infraId}`,
  ].join(';');
}

/** Parses a plugin's stdout as JSON; throws with the raw text and stderr when it is not JSON. */
export function parseStdout<T = unknown>(r: Pick<ExecPluginResult, 'stdout' | 'stderr'>): T {
  const text = r.stdout.toString('utf8');
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`plugin stdout is not JSON: ${JSON.stringify(text)} (stderr: ${r.stderr.toString('utf8')})`);
  }
}

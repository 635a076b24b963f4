/**
 * Execs a CNI plugin the way libcni does: argv is the plugin path alone, the
 * config goes in on a stdin pipe, CNI_* variables in the environment, the
 * result (or error JSON) comes back on stdout.
 */

import { spawn } from 'node:child_process';

export interface PluginInvocation {
  readonly plugin: string;
  readonly command: string;
  readonly containerId: string;
  readonly netns: string;
  readonly ifname: string;
  readonly cniArgs?: string;
  readonly cniPath: string;
  readonly stdin: Buffer | string;
  readonly extraEnv?: Readonly<Record<string, string>>;
  /** Killed (SIGKILL) past this; no limit when absent. */
  readonly timeoutMs?: number;
}

export interface PluginOutcome {
  readonly pid: number;
  readonly stdout: Buffer;
  readonly stderr: Buffer;
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
}

export function runPlugin(inv: PluginInvocation): Promise<PluginOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(inv.plugin, [], {
      argv0: inv.plugin,
      env: {
        PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin',
        CNI_COMMAND: inv.command,
        CNI_CONTAINERID: inv.containerId,
        CNI_NETNS: inv.netns,
        CNI_IFNAME: inv.ifname,
        CNI_ARGS: inv.cniArgs ?? '',
        CNI_PATH: inv.cniPath,
        ...inv.extraEnv,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    const timer = inv.timeoutMs === undefined ? null : setTimeout(() => child.kill('SIGKILL'), inv.timeoutMs);
    child.on('error', (err) => {
      if (timer) clearTimeout(timer);
      reject(err);
    });
    child.stdin.on('error', () => undefined); // a plugin may exit without reading its config
    child.on('close', (exitCode, signal) => {
      if (timer) clearTimeout(timer);
      resolve({ pid: child.pid ?? -1, stdout: Buffer.concat(out), stderr: Buffer.concat(err), exitCode, signal });
    });
    child.stdin.end(inv.stdin);
  });
}

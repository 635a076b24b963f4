/**
 * Startup checks: one clear sentence for each thing that would stop bpftrace
 * from recording, with what to do about it.
 */

import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';

export type PreflightCheck = 'privileges' | 'bpftrace' | 'tracefs' | 'btf';

export interface PreflightProblem {
  readonly check: PreflightCheck;
  readonly message: string;
}

export interface PreflightOptions {
  readonly bpftracePath: string;
  /** Mount tracefs when it is missing (as root this is allowed and harmless). */
  readonly mountTracefs: boolean;
  readonly tracefsPath?: string;
  readonly btfPath?: string;
  readonly procStatus?: string;
}

const CAP_SYS_ADMIN = 21n;
const CAP_PERFMON = 38n;
const CAP_BPF = 39n;

export function runPreflight(opts: PreflightOptions): PreflightProblem[] {
  const problems: PreflightProblem[] = [];
  const privileges = checkPrivileges(opts.procStatus ?? readFileSync('/proc/self/status', 'utf8'));
  if (privileges) problems.push(privileges);
  const bpftrace = checkBpftrace(opts.bpftracePath);
  if (bpftrace) problems.push(bpftrace);
  const tracefs = checkTracefs(opts.tracefsPath ?? '/sys/kernel/tracing', opts.mountTracefs);
  if (tracefs) problems.push(tracefs);
  const btfPath = opts.btfPath ?? '/sys/kernel/btf/vmlinux';
  if (!existsSync(btfPath)) {
    problems.push({
      check: 'btf',
      message: `This kernel has no BTF (${btfPath} is missing): cnirec needs a kernel built with CONFIG_DEBUG_INFO_BTF=y (most distribution kernels since 2021).`,
    });
  }
  return problems;
}

/** Effective capabilities from /proc/self/status: CAP_BPF + CAP_PERFMON, or CAP_SYS_ADMIN. */
export function checkPrivileges(procStatus: string): PreflightProblem | null {
  const match = /^CapEff:\s*([0-9a-f]+)$/m.exec(procStatus);
  const caps = match ? BigInt(`0x${match[1]}`) : 0n;
  const has = (cap: bigint) => ((caps >> cap) & 1n) === 1n;
  if (has(CAP_SYS_ADMIN) || (has(CAP_BPF) && has(CAP_PERFMON))) return null;
  return {
    check: 'privileges',
    message: 'cnirec needs root (or CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN) to load its tracer: run it with sudo, or as a privileged DaemonSet.',
  };
}

function checkBpftrace(bin: string): PreflightProblem | null {
  const res = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  if (res.error || res.status !== 0) {
    return {
      check: 'bpftrace',
      message: `bpftrace was not found (${bin}): install it with "apt-get install -y bpftrace" (Debian/Ubuntu) or point --bpftrace at it.`,
    };
  }
  const version = /v?(\d+)\.(\d+)/.exec(res.stdout);
  if (version && (Number(version[1]) === 0 && Number(version[2]) < 17)) {
    return { check: 'bpftrace', message: `bpftrace ${version[0]} is too old: cnirec needs 0.17 or newer.` };
  }
  return null;
}

function checkTracefs(dir: string, mount: boolean): PreflightProblem | null {
  if (tracefsReady(dir)) return null;
  if (mount) {
    const res = spawnSync('mount', ['-t', 'tracefs', 'nodev', dir], { encoding: 'utf8', timeout: 10_000 });
    if (res.status === 0 && tracefsReady(dir)) return null;
  }
  return {
    check: 'tracefs',
    message: `tracefs is not mounted at ${dir} and could not be mounted: run "mount -t tracefs nodev ${dir}" (in a container, mount the host's ${dir}).`,
  };
}

function tracefsReady(dir: string): boolean {
  try {
    accessSync(`${dir}/events/sched/sched_process_exec`, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

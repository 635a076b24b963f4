/**
 * What a bundle says of the host beyond cnirec's record: versions (cnirec,
 * Node.js, kernel, bpftrace, the container runtimes found, the CRI runtime's
 * own Version answer — crictl's only when neither the daemon nor the bundle
 * could ask it), the plugin binaries of the bin
 * dirs (name, size, sha256, the CNI versions their recorded VERSION probes
 * reported and the Debian package they come from — never the binaries), and
 * the network state plugins leave behind (links, addresses, routes, rules,
 * iptables, nftables). Each command runs with a short timeout; one that is
 * missing or fails is said so in its place, never fatal.
 */

import { execFile } from 'node:child_process';
import { readdir, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Stage } from './bundle-stage.js';
import { sha256Of } from './bundle-stage.js';
import { buildInfo } from './build-info.js';

const COMMAND_TIMEOUT_MS = 5_000;
const MAX_OUTPUT_BYTES = 32 * 1024 * 1024;

export interface CommandResult {
  readonly ok: boolean;
  readonly stdout: string;
  /** Why it did not answer (not installed, exit code, timeout). */
  readonly problem: string | null;
}

export function run(file: string, args: readonly string[]): Promise<CommandResult> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: COMMAND_TIMEOUT_MS, maxBuffer: MAX_OUTPUT_BYTES, env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', LC_ALL: 'C' } }, (err, stdout, stderr) => {
      if (!err) return resolve({ ok: true, stdout, problem: null });
      const e = err as NodeJS.ErrnoException & { killed?: boolean; code?: string | number };
      const problem = e.code === 'ENOENT' ? 'not installed' : e.killed ? `no answer within ${COMMAND_TIMEOUT_MS / 1000} s` : `${String(stderr).trim().split('\n')[0] || e.message}`;
      resolve({ ok: false, stdout, problem });
    });
  });
}

const firstLine = (r: CommandResult) => (r.ok ? r.stdout.trim().split('\n')[0] ?? '' : null);

/** The CRI runtime as the daemon or the bundle's own asking found it (bundle-runtime.ts's criVersionOf). */
export interface CriVersion {
  readonly from: 'daemon' | 'runtime';
  readonly endpoint: string | null;
  readonly name: string;
  readonly version: string;
  readonly apiVersion: string | null;
}

/** `cri`: the runtime's own Version answer; crictl is asked only without one. */
export async function hostVersions(bpftrace: string, cri: CriVersion | null = null): Promise<Record<string, unknown>> {
  const noAnswer: CommandResult = { ok: false, stdout: '', problem: 'not asked' };
  const [bpf, containerd, crio, podman, runc, crictl] = await Promise.all([
    run(bpftrace, ['--version']),
    run('containerd', ['--version']),
    run('crio', ['--version']),
    run('podman', ['--version']),
    run('runc', ['--version']),
    cri ? Promise.resolve(noAnswer) : run('crictl', ['version']),
  ]);
  return {
    cnirec: buildInfo().version,
    nodejs: process.version,
    kernel: os.release(),
    kernelBuild: os.version(),
    arch: os.arch(),
    hostname: os.hostname(),
    bpftrace: firstLine(bpf) ?? `unknown (${bpf.problem})`,
    runtimes: {
      containerd: firstLine(containerd),
      crio: firstLine(crio),
      podman: firstLine(podman),
      runc: firstLine(runc),
    },
    // The CRI runtime's own Version answer: as the daemon (or the bundle, the daemon down) asked it; else
    // crictl's, where it is set up; else null.
    cri: cri ?? (crictl.ok ? { from: 'crictl', text: crictl.stdout.trim() } : null),
  };
}

export interface PluginListing {
  readonly path: string;
  readonly name: string;
  readonly bytes: number | null;
  readonly mode: string | null;
  readonly mtime: string | null;
  readonly sha256: string | null;
  /** The CNI versions it reported to the recorded VERSION probes; null when none was recorded. */
  readonly supportedVersions: readonly string[] | null;
  /** The OS package the file belongs to (dpkg), where known. */
  readonly package: string | null;
  readonly problem: string | null;
}

export async function listPlugins(binDirs: readonly string[], reported: ReadonlyMap<string, readonly string[]>): Promise<PluginListing[]> {
  const files: string[] = [];
  for (const dir of [...new Set(binDirs)]) {
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const n of names.sort()) files.push(path.join(dir, n));
  }
  const packages = await owningPackages(files);
  const out: PluginListing[] = [];
  for (const file of files) {
    const s = await stat(file).catch(() => null);
    const hash = s?.isFile() ? await sha256Of(file).catch(() => null) : null;
    out.push({
      path: file,
      name: path.basename(file),
      bytes: s?.size ?? null,
      mode: s ? (s.mode & 0o7777).toString(8) : null,
      mtime: s ? new Date(s.mtimeMs).toISOString() : null,
      sha256: hash,
      supportedVersions: reported.get(file) ?? null,
      package: packages.get(file) ?? null,
      problem: s === null ? 'unreadable' : !s.isFile() ? 'not a regular file' : hash === null ? 'cannot be read' : null,
    });
  }
  return out;
}

/** "containernetworking-plugins 1.1.1+ds1-3" per file dpkg knows; empty elsewhere. */
async function owningPackages(files: readonly string[]): Promise<Map<string, string>> {
  const owners = new Map<string, string>();
  if (files.length === 0) return owners;
  const found = await run('dpkg-query', ['-S', ...files]);
  for (const line of found.stdout.split('\n')) {
    const m = /^([^:\s,]+)(?::[^:\s]+)?: (\/.+)$/.exec(line);
    if (m) owners.set(m[2]!, m[1]!);
  }
  const names = [...new Set(owners.values())];
  if (names.length === 0) return owners;
  const versions = await run('dpkg-query', ['-W', '-f=${Package} ${Version}\\n', ...names]);
  const versionOf = new Map(versions.stdout.split('\n').map((l) => l.split(' ') as [string, string]));
  for (const [file, pkg] of owners) owners.set(file, versionOf.get(pkg) ? `${pkg} ${versionOf.get(pkg)}` : pkg);
  return owners;
}

/** Network state commands: [file in the bundle, command, args]. */
const NET_STATE: readonly (readonly [string, string, readonly string[]])[] = [
  ['node/net/ip-link.json', 'ip', ['-d', '-j', 'link', 'show']],
  ['node/net/ip-addr.json', 'ip', ['-j', 'addr', 'show']],
  ['node/net/ip-route.json', 'ip', ['-j', 'route', 'show', 'table', 'all']],
  ['node/net/ip-rule.json', 'ip', ['-j', 'rule', 'show']],
  ['node/net/ip-netns.txt', 'ip', ['netns', 'list']],
  ['node/net/iptables-save.txt', 'iptables-save', []],
  ['node/net/ip6tables-save.txt', 'ip6tables-save', []],
  ['node/net/nft-ruleset.txt', 'nft', ['list', 'ruleset']],
];

/** Stages what each network state command printed; returns a note for each that did not answer. */
export async function stageNetState(stage: Stage): Promise<string[]> {
  const results = await Promise.all(NET_STATE.map(([, cmd, args]) => run(cmd, args)));
  const notes: string[] = [];
  for (let i = 0; i < NET_STATE.length; i++) {
    const [name, cmd, args] = NET_STATE[i]!;
    const r = results[i]!;
    const line = [cmd, ...args].join(' ');
    if (r.ok) await stage.add(name, r.stdout, `\`${line}\` when the bundle was taken`);
    else notes.push(`\`${line}\` did not answer: ${r.problem}`);
  }
  return notes;
}

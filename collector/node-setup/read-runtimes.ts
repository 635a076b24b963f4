/**
 * The I/O half of runtime discovery: which runtimes are on this node (a
 * running process, or its config file), their command lines and config
 * files, handed to the pure parsers. A runtime counts when its process runs
 * or its config exists; nothing here writes or runs anything.
 */

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { compareBytes } from './byte-order.js';
import { CONTAINERD_CONFIG, containerdCniPaths, containerdImports } from './containerd-config.js';
import { CRIO_CONFIG, CRIO_CONFIG_DIR, crioCniPaths, crioFlags, flagValues } from './crio-config.js';
import { kubeletView } from './kubelet-args.js';
import { CONTAINERS_CONF_DIR, CONTAINERS_CONF_FILES, podmanCniPaths } from './podman-config.js';
import type { ConfigText } from './toml-file.js';
import type { DoctorProblem, RuntimeCniPaths, RuntimeName } from './types.js';

/** Runtime config files are a few KiB; anything this big is not one. */
const MAX_CONFIG_BYTES = 1024 * 1024;

export interface RuntimeDiscovery {
  readonly runtimes: RuntimeCniPaths[];
  readonly problems: DoctorProblem[];
  /** The runtime the kubelet talks to, when a kubelet runs. */
  readonly kubeletRuntime: RuntimeName | null;
}

export interface DiscoveryOptions {
  /** The environment podman would see (CONTAINERS_CONF). */
  readonly env: NodeJS.ProcessEnv;
  /** /proc, for tests. */
  readonly procDir?: string;
}

export function discoverRuntimes(opts: DiscoveryOptions): RuntimeDiscovery {
  const procs = runningProcesses(opts.procDir ?? '/proc', ['containerd', 'crio', 'kubelet']);
  const runtimes: RuntimeCniPaths[] = [];
  const problems: DoctorProblem[] = [];

  const containerd = procs.get('containerd');
  const containerdConfig = (containerd && flagValues(containerd, ['config', 'c']).get('config')?.at(-1)) ?? (containerd && flagValues(containerd, ['c']).get('c')?.at(-1)) ?? CONTAINERD_CONFIG;
  const main = readConfig(containerdConfig);
  if (containerd || main) {
    const imports = main ? containerdImports(main).flatMap((p) => expandGlob(resolve(dirname(main.path), p))) : [];
    const r = containerdCniPaths([...(main ? [main] : []), ...imports.map(readConfig).filter((f): f is ConfigText => f !== null)]);
    if (r.paths) runtimes.push(r.paths);
    problems.push(...r.problems);
  }

  const crio = procs.get('crio');
  const flags = crio ? crioFlags(crio) : {};
  const crioMain = readConfig(flags.config ?? CRIO_CONFIG);
  const dropIns = listDir(flags.configDir ?? CRIO_CONFIG_DIR).map(readConfig).filter((f): f is ConfigText => f !== null);
  if (crio || crioMain || dropIns.length > 0) {
    const r = crioCniPaths([...(crioMain ? [crioMain] : []), ...dropIns], flags);
    runtimes.push(r.paths);
    problems.push(...r.problems);
  }

  const podmanFiles = opts.env.CONTAINERS_CONF
    ? [readConfig(opts.env.CONTAINERS_CONF)]
    : [...CONTAINERS_CONF_FILES.map(readConfig), ...listDir(CONTAINERS_CONF_DIR).filter((p) => p.endsWith('.conf')).map(readConfig)];
  const present = podmanFiles.filter((f): f is ConfigText => f !== null);
  if (present.length > 0) {
    const r = podmanCniPaths(present);
    runtimes.push(r.paths);
    problems.push(...r.problems);
  }

  const kubelet = procs.get('kubelet');
  const kv = kubelet ? kubeletView(kubelet) : null;
  if (kv?.paths) runtimes.push(kv.paths);
  return { runtimes, problems, kubeletRuntime: kv?.runtime ?? null };
}

/** The command line of the first running process of each name. */
function runningProcesses(procDir: string, names: readonly string[]): Map<string, string[]> {
  const found = new Map<string, string[]>();
  let pids: string[];
  try {
    pids = readdirSync(procDir).filter((p) => /^\d+$/.test(p));
  } catch {
    return found;
  }
  for (const pid of pids) {
    try {
      const comm = readFileSync(join(procDir, pid, 'comm'), 'utf8').trim();
      if (!names.includes(comm) || found.has(comm)) continue;
      const argv = readFileSync(join(procDir, pid, 'cmdline'), 'utf8').split('\0').filter((a) => a !== '');
      if (argv.length > 0) found.set(comm, argv);
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

function readConfig(path: string | null): ConfigText | null {
  if (!path) return null;
  try {
    const st = statSync(path);
    if (!st.isFile() || st.size > MAX_CONFIG_BYTES) return null;
    return { path, text: readFileSync(path, 'utf8') };
  } catch {
    return null;
  }
}

/** Regular, visible files of a directory, in byte order. */
function listDir(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => !e.name.startsWith('.') && (e.isFile() || e.isSymbolicLink()))
      .map((e) => e.name)
      .sort(compareBytes)
      .map((n) => join(dir, n));
  } catch {
    return [];
  }
}

/** containerd's imports: a path, or a `*` pattern in its last part. */
function expandGlob(pattern: string): string[] {
  const base = pattern.slice(pattern.lastIndexOf('/') + 1);
  if (!base.includes('*')) return [pattern];
  const re = new RegExp(`^${base.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return listDir(dirname(pattern)).filter((p) => re.test(p.slice(p.lastIndexOf('/') + 1)));
}

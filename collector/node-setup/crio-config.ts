/**
 * CRI-O's CNI paths: `[crio.network]` in crio.conf, then every drop-in of
 * crio.conf.d in lexical order (the last file to set an option wins,
 * crio.conf.d(5)), then the command line (`--cni-config-dir`,
 * `--cni-plugin-dir`, `--cni-default-network`), which beats both.
 * Defaults: network_dir /etc/cni/net.d/, plugin_dirs [/opt/cni/bin/].
 */

import type { DoctorProblem, RuntimeCniPaths } from './types.js';
import { cleanDir, parseToml, stringAt, stringsAt, tableAt, type ConfigText } from './toml-file.js';

export const CRIO_CONFIG = '/etc/crio/crio.conf';
export const CRIO_CONFIG_DIR = '/etc/crio/crio.conf.d';

/** What CRI-O's command line says about its config files and CNI paths. */
export interface CrioFlags {
  readonly config?: string;
  readonly configDir?: string;
  readonly confDir?: string;
  readonly pluginDirs?: readonly string[];
  readonly defaultNetwork?: string;
}

export interface CrioResult {
  readonly paths: RuntimeCniPaths;
  readonly problems: readonly DoctorProblem[];
}

/** `files`: crio.conf (when present) first, then the drop-ins in lexical order. */
export function crioCniPaths(files: readonly ConfigText[], flags: CrioFlags = {}): CrioResult {
  const problems: DoctorProblem[] = [];
  let confDir = '/etc/cni/net.d/';
  let pluginDirs: readonly string[] = ['/opt/cni/bin/'];
  let defaultNetwork = '';
  const sources: string[] = [];
  for (const f of files) {
    const parsed = parseToml(f, 'CRI-O');
    if (!parsed.ok) {
      problems.push(parsed.problem);
      continue;
    }
    sources.push(f.path);
    const net = tableAt(parsed.table, 'crio', 'network');
    if (!net) continue;
    confDir = stringAt(net, 'network_dir') ?? confDir;
    // plugin_dir (one string) is the old spelling of plugin_dirs.
    const dirs = stringsAt(net, 'plugin_dirs') ?? (stringAt(net, 'plugin_dir') ? [stringAt(net, 'plugin_dir') as string] : undefined);
    pluginDirs = dirs ?? pluginDirs;
    defaultNetwork = stringAt(net, 'cni_default_network') ?? defaultNetwork;
  }
  const notes: string[] = [];
  if (files.length === 0) notes.push(`no ${CRIO_CONFIG} and no drop-ins: CRI-O's defaults`);
  if (flags.confDir !== undefined || flags.pluginDirs !== undefined || flags.defaultNetwork !== undefined) {
    sources.push('crio command line');
    notes.push('CNI flags on the crio command line override its config files');
  }
  confDir = flags.confDir ?? confDir;
  pluginDirs = flags.pluginDirs ?? pluginDirs;
  defaultNetwork = flags.defaultNetwork ?? defaultNetwork;
  return {
    paths: {
      runtime: 'cri-o',
      sources: sources.length > 0 ? sources : ['CRI-O built-in defaults'],
      confDir: cleanDir(confDir),
      binDirs: pluginDirs.map(cleanDir),
      loader: 'ocicni',
      defaultNetwork: defaultNetwork === '' ? null : defaultNetwork,
      maxConfNum: null,
      extraConfDirs: [],
      notes,
    },
    problems,
  };
}

/** CRI-O's flags from its command line (`/proc/<pid>/cmdline`). */
export function crioFlags(argv: readonly string[]): CrioFlags {
  const flags = flagValues(argv, ['config', 'c', 'config-dir', 'd', 'cni-config-dir', 'cni-plugin-dir', 'cni-default-network']);
  const last = (...names: string[]) => names.flatMap((n) => flags.get(n) ?? []).at(-1);
  const pluginDirs = flags.get('cni-plugin-dir');
  return {
    ...(last('config', 'c') !== undefined ? { config: last('config', 'c') } : {}),
    ...(last('config-dir', 'd') !== undefined ? { configDir: last('config-dir', 'd') } : {}),
    ...(last('cni-config-dir') !== undefined ? { confDir: last('cni-config-dir') } : {}),
    ...(pluginDirs ? { pluginDirs: pluginDirs.flatMap((d) => d.split(',')) } : {}),
    ...(last('cni-default-network') !== undefined ? { defaultNetwork: last('cni-default-network') } : {}),
  };
}

/**
 * Values of the named flags in a Go-style command line (`--name value`,
 * `--name=value`, `-name value`), each flag's values in order.
 */
export function flagValues(argv: readonly string[], names: readonly string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (let i = 1; i < argv.length; i++) {
    const m = /^--?([A-Za-z0-9][\w-]*)(?:=(.*))?$/s.exec(argv[i] as string);
    if (!m || !names.includes(m[1] as string)) continue;
    const value = m[2] ?? argv[++i];
    if (value === undefined) break;
    out.set(m[1] as string, [...(out.get(m[1] as string) ?? []), value]);
  }
  return out;
}

/**
 * containerd's CNI paths from its config.toml, in the layout of each config
 * version (containerd's docs/cri/config.md):
 * - version 3 (containerd 2.x): `[plugins.'io.containerd.cri.v1.runtime'.cni]`
 *   with `bin_dirs` (2.1+; `bin_dir` before), `conf_dir`, `max_conf_num`;
 * - version 2 (containerd 1.3+): `[plugins."io.containerd.grpc.v1.cri".cni]`
 *   with `bin_dir`, `conf_dir`, `max_conf_num`;
 * - version 1 (no `version`): `[plugins.cri.cni]` (containerd 2.x refuses it).
 * Runtime classes may read their own conf dir (`cni_conf_dir` under
 * `containerd.runtimes.<handler>`). A config that disables the CRI plugin
 * (Docker's containerd package does) runs no CNI at all.
 */

import type { DoctorProblem, RuntimeCniPaths } from './types.js';
import { cleanDir, numberAt, parseToml, stringAt, stringsAt, tableAt, type ConfigText, type TomlTable } from './toml-file.js';

export const CONTAINERD_CONFIG = '/etc/containerd/config.toml';
const DEFAULT_CONF_DIR = '/etc/cni/net.d';
const DEFAULT_BIN_DIR = '/opt/cni/bin';

/** The CRI plugin's table id in each config version, and the ids that disable it. */
const CRI_PLUGIN: Record<1 | 2 | 3, { readonly id: string; readonly disabledBy: readonly string[] }> = {
  3: { id: 'io.containerd.cri.v1.runtime', disabledBy: ['io.containerd.cri.v1.runtime', 'io.containerd.grpc.v1.cri'] },
  2: { id: 'io.containerd.grpc.v1.cri', disabledBy: ['io.containerd.grpc.v1.cri', 'cri'] },
  1: { id: 'cri', disabledBy: ['cri'] },
};

export interface ContainerdResult {
  readonly paths: RuntimeCniPaths | null;
  readonly problems: readonly DoctorProblem[];
}

/** The `imports` patterns of a config (files merged over it), for the shell to read. */
export function containerdImports(main: ConfigText): string[] {
  const parsed = parseToml(main, 'containerd');
  return parsed.ok ? (stringsAt(parsed.table, 'imports') ?? []) : [];
}

/**
 * `files`: the main config first, then the files its `imports` named, in
 * order (later ones override). No files: containerd's built-in defaults.
 */
export function containerdCniPaths(files: readonly ConfigText[]): ContainerdResult {
  const problems: DoctorProblem[] = [];
  let table: TomlTable = {};
  for (const f of files) {
    const parsed = parseToml(f, 'containerd');
    if (!parsed.ok) {
      problems.push(parsed.problem);
      return { paths: null, problems };
    }
    table = mergeTables(table, parsed.table);
  }
  const notes: string[] = [];
  if (files.length === 0) notes.push(`no ${CONTAINERD_CONFIG}: containerd runs with its built-in defaults`);
  const rawVersion = numberAt(table, 'version') ?? 1;
  const version: 1 | 2 | 3 = rawVersion >= 3 ? 3 : rawVersion === 2 ? 2 : 1;
  if (version === 1 && files.length > 0) notes.push('config version 1 (no "version = 2" or "3"): containerd 2.x refuses it; 1.x reads [plugins.cri.cni]');
  const cri = CRI_PLUGIN[version];
  const sources = files.length === 0 ? ['containerd built-in defaults'] : files.map((f) => f.path);

  const disabled = stringsAt(table, 'disabled_plugins') ?? [];
  if (disabled.some((d) => cri.disabledBy.includes(d))) {
    notes.push(`disabled_plugins lists the CRI plugin: this containerd serves no Kubernetes pods and runs no CNI plugins (Docker's containerd package ships it so)`);
    return { paths: { runtime: 'containerd', sources, confDir: null, binDirs: [], loader: 'go-cni', defaultNetwork: null, maxConfNum: null, extraConfDirs: [], notes }, problems };
  }

  const cni = tableAt(table, 'plugins', cri.id, 'cni') ?? {};
  const binDirs = stringsAt(cni, 'bin_dirs')?.filter((d) => d !== '');
  const binDir = stringAt(cni, 'bin_dir');
  const confDir = stringAt(cni, 'conf_dir') || DEFAULT_CONF_DIR;
  const maxConfNum = numberAt(cni, 'max_conf_num') ?? 1;
  if (stringAt(cni, 'conf_template')) notes.push('conf_template is set: containerd writes the conf file from it once kubelet gives the pod CIDR');

  const extraConfDirs: { handler: string; confDir: string; maxConfNum: number | null }[] = [];
  const runtimes = tableAt(table, 'plugins', cri.id, 'containerd', 'runtimes') ?? {};
  for (const [handler, rt] of Object.entries(runtimes)) {
    const dir = rt !== null && typeof rt === 'object' ? stringAt(rt as TomlTable, 'cni_conf_dir') : undefined;
    if (dir) extraConfDirs.push({ handler, confDir: cleanDir(dir), maxConfNum: numberAt(rt as TomlTable, 'cni_max_conf_num') ?? null });
  }

  return {
    paths: {
      runtime: 'containerd',
      sources,
      confDir: cleanDir(confDir),
      binDirs: (binDirs && binDirs.length > 0 ? binDirs : binDir ? [binDir] : [DEFAULT_BIN_DIR]).map(cleanDir),
      loader: 'go-cni',
      defaultNetwork: null,
      maxConfNum,
      extraConfDirs,
      notes,
    },
    problems,
  };
}

/** Tables merge key by key, recursively; any other value of a later file replaces the earlier one. */
function mergeTables(base: TomlTable, over: TomlTable): TomlTable {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isTable(b) && isTable(v) ? mergeTables(b, v) : v;
  }
  return out;
}

const isTable = (v: unknown): v is TomlTable => v !== null && typeof v === 'object' && !Array.isArray(v);

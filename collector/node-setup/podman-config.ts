/**
 * podman's CNI paths from containers.conf(5): `[network]` with
 * `network_backend`, `cni_plugin_dirs`, `network_config_dir` and
 * `default_network`. Files apply in order: /usr/share/containers/containers.conf,
 * /etc/containers/containers.conf, then /etc/containers/containers.conf.d/*.conf;
 * when CONTAINERS_CONF is set, only that file is read. podman on its CNI
 * backend loads `.conflist` files only and attaches networks by name.
 */

import type { DoctorProblem, RuntimeCniPaths } from './types.js';
import { cleanDir, parseToml, stringAt, stringsAt, tableAt, type ConfigText } from './toml-file.js';

export const CONTAINERS_CONF_FILES = ['/usr/share/containers/containers.conf', '/etc/containers/containers.conf'] as const;
export const CONTAINERS_CONF_DIR = '/etc/containers/containers.conf.d';

/** containers.conf's own default list, searched in this order. */
const DEFAULT_PLUGIN_DIRS = ['/usr/local/libexec/cni', '/usr/libexec/cni', '/usr/local/lib/cni', '/usr/lib/cni', '/opt/cni/bin'];

export interface PodmanResult {
  readonly paths: RuntimeCniPaths;
  readonly problems: readonly DoctorProblem[];
}

export function podmanCniPaths(files: readonly ConfigText[]): PodmanResult {
  const problems: DoctorProblem[] = [];
  let backend = '';
  let pluginDirs: readonly string[] = DEFAULT_PLUGIN_DIRS;
  let confDir = '/etc/cni/net.d';
  let defaultNetwork = 'podman';
  const sources: string[] = [];
  for (const f of files) {
    const parsed = parseToml(f, 'podman');
    if (!parsed.ok) {
      problems.push(parsed.problem);
      continue;
    }
    sources.push(f.path);
    const net = tableAt(parsed.table, 'network');
    if (!net) continue;
    backend = stringAt(net, 'network_backend') ?? backend;
    pluginDirs = stringsAt(net, 'cni_plugin_dirs') ?? pluginDirs;
    confDir = stringAt(net, 'network_config_dir') || confDir;
    defaultNetwork = stringAt(net, 'default_network') || defaultNetwork;
  }
  const notes: string[] = [];
  if (backend === 'netavark') notes.push('network_backend is netavark: podman runs no CNI plugins');
  else if (backend === '') notes.push('network_backend is not set: podman 4 uses CNI when netavark is not installed or it already has CNI networks or containers');
  return {
    paths: {
      runtime: 'podman',
      sources: sources.length > 0 ? sources : ['containers.conf defaults'],
      confDir: backend === 'netavark' ? null : cleanDir(confDir),
      binDirs: backend === 'netavark' ? [] : pluginDirs.map(cleanDir),
      loader: 'podman',
      defaultNetwork,
      maxConfNum: null,
      extraConfDirs: [],
      notes,
    },
    problems,
  };
}

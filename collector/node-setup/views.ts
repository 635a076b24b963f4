/**
 * What to check, and against which bin dirs and rules: one view per conf dir
 * a runtime reads (as found in its config), or per `--cni-conf-dir` given by
 * hand, or the libcni defaults when nothing is known. A directory given by
 * hand that no runtime reads, or bin dirs other than the runtime's, is itself
 * a problem: the checks would be of files the pods never see.
 */

import type { ConfLoader, DoctorProblem, RuntimeCniPaths, RuntimeName } from './types.js';

export const DEFAULT_CONF_DIR = '/etc/cni/net.d';
export const DEFAULT_BIN_DIR = '/opt/cni/bin';

export const RUNTIME_LABELS: Readonly<Record<RuntimeName, string>> = { containerd: 'containerd', 'cri-o': 'CRI-O', podman: 'podman', kubelet: 'the kubelet' };

export interface CheckView {
  /** Who reads this directory: a runtime, `--cni-conf-dir`, or `default`. */
  readonly readBy: RuntimeName | 'flag' | 'default';
  /** How the reader is named in sentences. */
  readonly label: string;
  readonly confDir: string;
  readonly binDirs: readonly string[];
  readonly loader: ConfLoader;
  readonly maxConfNum: number | null;
  readonly defaultNetwork: string | null;
  /** The runtime config behind it, for messages ("containerd (/etc/containerd/config.toml)"). */
  readonly source: string | null;
}

export interface Requested {
  readonly confDirs: readonly string[];
  readonly binDirs: readonly string[];
}

export function buildViews(runtimes: readonly RuntimeCniPaths[], requested: Requested): { views: CheckView[]; problems: DoctorProblem[] } {
  const problems: DoctorProblem[] = [];
  const reading = runtimes.filter((r) => r.confDir !== null);
  const ofRuntime = (r: RuntimeCniPaths, confDir: string, maxConfNum: number | null): CheckView => ({
    readBy: r.runtime,
    label: RUNTIME_LABELS[r.runtime],
    confDir,
    binDirs: r.binDirs,
    loader: r.loader,
    maxConfNum,
    defaultNetwork: r.defaultNetwork,
    source: r.sources.join(', '),
  });

  if (requested.confDirs.length === 0 && requested.binDirs.length === 0) {
    const views = reading.flatMap((r) => [
      ofRuntime(r, r.confDir as string, r.maxConfNum),
      ...r.extraConfDirs.map((x) => ({ ...ofRuntime(r, x.confDir, x.maxConfNum ?? r.maxConfNum), label: `${RUNTIME_LABELS[r.runtime]} (runtime class ${x.handler})` })),
    ]);
    if (views.length > 0) return { views, problems };
    return { views: [{ readBy: 'default', label: 'the runtime', confDir: DEFAULT_CONF_DIR, binDirs: [DEFAULT_BIN_DIR], loader: 'libcni', maxConfNum: 1, defaultNetwork: null, source: null }], problems };
  }

  const confDirs = requested.confDirs.length > 0 ? requested.confDirs : reading.length > 0 ? reading.map((r) => r.confDir as string) : [DEFAULT_CONF_DIR];
  const views = [...new Set(confDirs)].map((confDir): CheckView => {
    const r = reading.find((x) => x.confDir === confDir);
    const binDirs = requested.binDirs.length > 0 ? requested.binDirs : (r?.binDirs ?? [DEFAULT_BIN_DIR]);
    if (r && requested.binDirs.length > 0 && !sameDirs(r.binDirs, requested.binDirs)) {
      problems.push({
        code: 'bin-dir-mismatch',
        severity: 'warning',
        path: confDir,
        message: `${RUNTIME_LABELS[r.runtime]} (${r.sources.join(', ')}) looks up plugins in ${r.binDirs.join(', ')}, not in the --cni-bin-dir given (${requested.binDirs.join(', ')}): plugins were checked where it does not look; drop --cni-bin-dir or give its dirs`,
      });
    }
    return r
      ? { ...ofRuntime(r, confDir, r.maxConfNum), binDirs, readBy: requested.confDirs.length > 0 ? 'flag' : r.runtime }
      : { readBy: requested.confDirs.length > 0 ? 'flag' : 'default', label: 'the runtime', confDir, binDirs, loader: 'libcni', maxConfNum: 1, defaultNetwork: null, source: null };
  });
  if (requested.confDirs.length > 0) {
    for (const r of reading) {
      if (requested.confDirs.includes(r.confDir as string)) continue;
      problems.push({
        code: 'conf-dir-mismatch',
        severity: 'warning',
        path: r.confDir,
        message: `${RUNTIME_LABELS[r.runtime]} (${r.sources.join(', ')}) reads ${r.confDir}, not the --cni-conf-dir given (${requested.confDirs.join(', ')}): the files checked are not the ones its pods get; drop --cni-conf-dir or add ${r.confDir}`,
      });
    }
  }
  return { views, problems };
}

function sameDirs(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

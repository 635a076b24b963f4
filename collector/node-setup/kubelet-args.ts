/**
 * What the kubelet's command line says about CNI. Kubernetes 1.23 and older
 * ran CNI from the kubelet itself (dockershim) with `--network-plugin=cni`,
 * `--cni-conf-dir` and `--cni-bin-dir`; since 1.24 the runtime does, and the
 * kubelet only names it (`--container-runtime-endpoint`), which tells which
 * runtime's paths count on this node.
 */

import type { RuntimeCniPaths, RuntimeName } from './types.js';
import { flagValues } from './crio-config.js';
import { cleanDir } from './toml-file.js';

export interface KubeletView {
  /** CNI paths when the kubelet runs CNI itself (dockershim); null otherwise. */
  readonly paths: RuntimeCniPaths | null;
  /** The runtime the kubelet talks to, when its endpoint names one. */
  readonly runtime: RuntimeName | null;
  readonly endpoint: string | null;
}

export function kubeletView(argv: readonly string[]): KubeletView {
  const flags = flagValues(argv, ['network-plugin', 'cni-conf-dir', 'cni-bin-dir', 'container-runtime-endpoint']);
  const last = (n: string) => flags.get(n)?.at(-1);
  const endpoint = last('container-runtime-endpoint') ?? null;
  const runtime = endpoint === null ? null : /containerd/.test(endpoint) ? 'containerd' : /crio/.test(endpoint) ? 'cri-o' : null;
  if (last('network-plugin') !== 'cni') return { paths: null, runtime, endpoint };
  return {
    paths: {
      runtime: 'kubelet',
      sources: ['kubelet command line'],
      confDir: cleanDir(last('cni-conf-dir') ?? '/etc/cni/net.d'),
      binDirs: (last('cni-bin-dir') ?? '/opt/cni/bin').split(',').filter(Boolean).map(cleanDir),
      loader: 'ocicni',
      defaultNetwork: null,
      maxConfNum: null,
      extraConfDirs: [],
      notes: ['kubelet runs CNI itself (--network-plugin=cni, Kubernetes 1.23 or older)'],
    },
    runtime,
    endpoint,
  };
}

/**
 * The node's CNI setup as data: which conf dir and bin dirs each runtime
 * really reads, what is in them, and what is wrong with it. Everything here
 * is plain values, so the pure parts (runtime config parsing, conf checks,
 * the doctor's report) are tested on fixtures and the thin I/O shell
 * (read-node.ts) only gathers them.
 */

/** Who reads CNI configuration on a node. */
export type RuntimeName = 'containerd' | 'cri-o' | 'podman' | 'kubelet';

/**
 * How a runtime picks networks out of a conf dir (they differ, and that is
 * half of the confusion):
 * - `go-cni` (containerd): `.conf`, `.conflist`, `.json` in byte order; the first
 *   `maxConfNum` files are loaded and a file it cannot load on the way fails the whole load.
 * - `ocicni` (CRI-O): the same files; one it cannot load or validate (a missing
 *   plugin) is skipped, a repeated network name ignored; the default network is
 *   `defaultNetwork` by name, else the first file that loads.
 * - `podman` (podman on its CNI backend): `.conflist` files only, networks chosen by name.
 * - `libcni`: nothing known about the runtime: the first file in byte order wins.
 */
export type ConfLoader = 'go-cni' | 'ocicni' | 'podman' | 'libcni';

/** The CNI paths one runtime's configuration resolves to. */
export interface RuntimeCniPaths {
  readonly runtime: RuntimeName;
  /** The files (and command lines) these were read from, in the order they apply. */
  readonly sources: readonly string[];
  /** Null when this runtime reads no CNI configuration as set up (CRI disabled, netavark). */
  readonly confDir: string | null;
  readonly binDirs: readonly string[];
  readonly loader: ConfLoader;
  /** A network chosen by name (CRI-O's cni_default_network, podman's default_network); null: by file order. */
  readonly defaultNetwork: string | null;
  /** containerd's max_conf_num: files loaded (the first is the pod's network); 0: all. Null for others. */
  readonly maxConfNum: number | null;
  /** Further conf dirs this runtime reads (containerd runtime classes with their own cni_conf_dir). */
  readonly extraConfDirs: readonly { readonly handler: string; readonly confDir: string; readonly maxConfNum: number | null }[];
  /** What a person should know about how these were found, one sentence each. */
  readonly notes: readonly string[];
}

/** Where a doctor problem points. */
export interface ProblemSubject {
  readonly path?: string | null;
  readonly network?: string | null;
}

export const PROBLEM_CODES = [
  'runtime-config-invalid',
  'conf-dir-missing',
  'conf-dir-unreadable',
  'no-network-config',
  'conf-unreadable',
  'conf-not-regular-file',
  'conf-too-large',
  'json-syntax',
  'conf-invalid',
  'missing-cni-version',
  'bad-cni-version',
  'cni-version-unsupported',
  'old-cni-version',
  'duplicate-network-name',
  'load-fails',
  'default-network-missing',
  'shadowed-edit',
  'plugin-missing',
  'plugin-not-executable',
  'plugin-not-regular-file',
  'bin-dir-missing',
  'conf-dir-mismatch',
  'bin-dir-mismatch',
] as const;
export type ProblemCode = (typeof PROBLEM_CODES)[number];

/**
 * `error`: pods on this node fail to get network (or will at the next
 * change); `warning`: what is configured is not what takes effect. Either
 * makes `cnirec doctor` exit non-zero.
 */
export type Severity = 'error' | 'warning';

export interface DoctorProblem extends ProblemSubject {
  readonly code: ProblemCode;
  readonly severity: Severity;
  /** One line: what is wrong, what it does to pods, and what to do. */
  readonly message: string;
}

/** A JSON syntax error where an editor shows it (1-based). */
export interface JsonErrorPosition {
  readonly message: string;
  readonly line: number;
  readonly column: number;
}

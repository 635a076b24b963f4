/**
 * The runtime's side as cnirec sees it: what a container runtime (containerd,
 * CRI-O) answers over the CRI, and why it did not. Times are milliseconds
 * since the Unix epoch.
 */

/** A condition of CRI Status (`RuntimeReady`, `NetworkReady`): true or false, with the runtime's reason and message. */
export interface RuntimeCondition {
  readonly type: string;
  readonly status: boolean;
  readonly reason: string;
  readonly message: string;
}

/** CRI Version: which runtime answers, and which CRI it speaks. */
export interface RuntimeVersion {
  readonly name: string;
  readonly version: string;
  readonly apiVersion: string;
}

export type SandboxState = 'ready' | 'notready';

/** A pod sandbox as ListPodSandbox lists it, with what PodSandboxStatus adds (its addresses) once asked. */
export interface RuntimeSandbox {
  /** The sandbox id: CNI_CONTAINERID of its plugin calls. */
  readonly id: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly attempt: number;
  readonly state: SandboxState;
  readonly createdAtMs: number;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly runtimeHandler: string;
  /** The pod IP the runtime reports (PodSandboxStatus); null when it reports none or was not asked yet. */
  readonly ip: string | null;
  readonly additionalIps: readonly string[];
}

/**
 * Why the runtime could not be asked:
 * - `off`: `--cri-endpoint none`;
 * - `absent`: no socket at the endpoint (no runtime there, or it is not running);
 * - `refused`: a socket, but nobody accepts on it (the runtime died and left it);
 * - `denied`: the socket may not be opened (cnirec needs root);
 * - `timeout`: it accepted but did not answer in time (a runtime that hangs);
 * - `not-cri`: something answered that is not a CRI runtime (another gRPC service, or no gRPC at all);
 * - `v1alpha2-only`: a runtime that speaks only the CRI before v1 (containerd 1.5, CRI-O before 1.20);
 * - `error`: the runtime answered with an error (e.g. "server is not initialized yet" while it starts).
 */
export const RUNTIME_PROBLEM_KINDS = ['off', 'absent', 'refused', 'denied', 'timeout', 'not-cri', 'v1alpha2-only', 'error'] as const;
export type RuntimeProblemKind = (typeof RUNTIME_PROBLEM_KINDS)[number];

export interface RuntimeProblem {
  readonly kind: RuntimeProblemKind;
  /** One sentence for a person: what happened, where, and what it means. */
  readonly message: string;
}

/**
 * One poll of the runtime. `conditions` null: Status was not answered; `sandboxes` null: ListPodSandbox was
 * not answered (nothing can be judged from a list not taken).
 */
export interface RuntimeSnapshot {
  readonly atMs: number;
  /** The socket asked (the configured one, or the first that answered); null when none could be found. */
  readonly endpoint: string | null;
  readonly reachable: boolean;
  readonly version: RuntimeVersion | null;
  readonly conditions: readonly RuntimeCondition[] | null;
  readonly sandboxes: readonly RuntimeSandbox[] | null;
  /** When the sandbox list was taken. */
  readonly listedAtMs: number | null;
  readonly problem: RuntimeProblem | null;
  /**
   * Since when the runtime has answered every poll (null while it does not): a runtime that has just started
   * (or just come back) may list its sandboxes before it has recovered them all, so nothing is judged leaked then.
   */
  readonly answeringSinceMs: number | null;
}

export interface RuntimeSnapshotListener {
  onRuntimeSnapshot(snapshot: RuntimeSnapshot): void;
}

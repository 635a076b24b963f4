/**
 * The runtime asked once, for a command that runs without the daemon
 * (`cnirec doctor`, `cnirec bundle` with the daemon down): Version, Status
 * and, when wanted, ListPodSandbox, each with the given deadline, through the
 * same read-only client the poller uses. Never throws: a runtime that cannot
 * be asked is an answer saying why.
 */

import { createCriClient, CriCallError } from './cri-client.js';
import type { CriEndpointSetting } from './cri-endpoint.js';
import { connectRuntime } from './runtime-poller.js';
import type { RuntimeCondition, RuntimeProblem, RuntimeSandbox, RuntimeVersion } from './types.js';

export interface RuntimeAnswer {
  readonly atMs: number;
  /** The socket that answered (or the configured one that did not); null when none was found. */
  readonly endpoint: string | null;
  /** It answered Version and Status. */
  readonly reachable: boolean;
  readonly version: RuntimeVersion | null;
  /** Empty when it could not be asked. */
  readonly conditions: readonly RuntimeCondition[];
  /** Its sandboxes (no addresses: ListPodSandbox has none), when asked for and answered; else null. */
  readonly sandboxes: readonly RuntimeSandbox[] | null;
  /** Why it could not be asked (kind `off` with --cri-endpoint none); null when it answered. */
  readonly problem: RuntimeProblem | null;
}

export interface AskOptions {
  readonly timeoutMs: number;
  /** Also ListPodSandbox. */
  readonly sandboxes?: boolean;
  /** Applied to each sandbox's labels and annotations (the collector's Redactor.stringMap). */
  readonly redact?: (map: Readonly<Record<string, string>>) => Readonly<Record<string, string>>;
  readonly now?: () => number;
}

export async function askRuntimeOnce(setting: CriEndpointSetting, opts: AskOptions): Promise<RuntimeAnswer> {
  const atMs = (opts.now ?? Date.now)();
  let endpoint: string | null = setting.kind === 'fixed' ? setting.path : null;
  try {
    const { client, version } = await connectRuntime(setting, (p) => createCriClient(p, { timeoutMs: opts.timeoutMs }));
    endpoint = client.endpoint;
    try {
      const status = await client.status();
      let sandboxes: RuntimeSandbox[] | null = null;
      if (opts.sandboxes) {
        // A list not answered leaves the rest of the answer as it is.
        const listed = await client.listPodSandbox().catch(() => null);
        const redact = opts.redact;
        sandboxes = listed && redact ? listed.map((s) => ({ ...s, labels: redact(s.labels), annotations: redact(s.annotations) })) : listed;
      }
      return { atMs, endpoint, reachable: true, version, conditions: status.conditions, sandboxes, problem: null };
    } finally {
      client.close();
    }
  } catch (err) {
    const problem: RuntimeProblem = err instanceof CriCallError ? err.problem : { kind: 'error', message: `Asking the runtime failed: ${err instanceof Error ? err.message : String(err)}` };
    return { atMs, endpoint, reachable: false, version: null, conditions: [], sandboxes: null, problem };
  }
}

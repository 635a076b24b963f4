/**
 * Asks the node's runtime, every interval, what the kubelet asks it: Status
 * (its conditions), and ListPodSandbox (its sandboxes), with PodSandboxStatus
 * for a sandbox new or changed since the last poll (its addresses). Each poll
 * is one RuntimeSnapshot for the subscribers. It runs on its own timer, beside
 * the tracer and never on the record's path: a slow, absent or wrong runtime
 * costs a poll that fails at its deadline, and the next one starts an interval
 * after it ended, so polls never pile up.
 *
 * With no endpoint configured, the usual sockets are tried in order until one
 * answers; it is kept while it answers and looked for again when it stops.
 */

import { lstatSync } from 'node:fs';
import type { Logger } from 'pino';
import { createTopic } from '../../lib/index.js';
import { createCriClient, CriCallError, DEFAULT_CRI_TIMEOUT_MS, type CriClient } from './cri-client.js';
import type { CriEndpointSetting } from './cri-endpoint.js';
import { noSocket } from './cri-problem.js';
import type { RuntimeCondition, RuntimeProblem, RuntimeSandbox, RuntimeSnapshot, RuntimeSnapshotListener, RuntimeVersion } from './types.js';

/** PodSandboxStatus calls per poll at most: a node's first poll of hundreds of pods spreads over a few. */
const MAX_DETAILS_PER_POLL = 64;

export interface RuntimePollerOptions {
  readonly endpoint: CriEndpointSetting;
  readonly intervalMs: number;
  readonly timeoutMs?: number;
  readonly logger?: Pick<Logger, 'info' | 'warn' | 'error'>;
  readonly now?: () => number;
  /** Applied to every sandbox before anyone sees it: its labels' and annotations' secrets (the collector's Redactor.stringMap). */
  readonly redact?: (map: Readonly<Record<string, string>>) => Readonly<Record<string, string>>;
  /** Makes a client for a socket (tests: the same, with short deadlines). */
  readonly connect?: (socketPath: string) => CriClient;
}

export interface RuntimePoller {
  subscribe(listener: RuntimeSnapshotListener): () => void;
  /** The last poll's snapshot; null before the first. */
  latest(): RuntimeSnapshot | null;
  /** One poll now (the timer's polls go on): for start-up and tests. */
  pollOnce(): Promise<RuntimeSnapshot>;
  start(): void;
  stop(): void;
}

const toProblem = (err: unknown): RuntimeProblem =>
  err instanceof CriCallError ? err.problem : { kind: 'error', message: `Asking the runtime failed: ${err instanceof Error ? err.message : String(err)}` };

const isSocket = (p: string): boolean => {
  try {
    return lstatSync(p).isSocket();
  } catch {
    return false;
  }
};

/**
 * A client whose runtime answers Version: the configured socket, or the first of the usual ones that answers.
 * Throws a CriCallError saying why none does.
 */
export async function connectRuntime(setting: CriEndpointSetting, connect: (socketPath: string) => CriClient): Promise<{ client: CriClient; version: RuntimeVersion }> {
  if (setting.kind === 'off') throw new CriCallError({ kind: 'off', message: 'The runtime is not asked (--cri-endpoint none).' });
  const candidates = setting.kind === 'fixed' ? [setting.path] : setting.candidates.filter(isSocket);
  if (candidates.length === 0) {
    const tried = setting.kind === 'auto' ? setting.candidates : [];
    throw new CriCallError(
      tried.length === 1 ? noSocket(tried[0]!) : { kind: 'absent', message: `No CRI runtime socket found (looked for ${tried.join(', ')}): set --cri-endpoint to the runtime's socket, or "none".` },
    );
  }
  let first: unknown = null;
  for (const path of candidates) {
    const c = connect(path);
    try {
      return { client: c, version: await c.version() };
    } catch (err) {
      c.close();
      first ??= err;
    }
  }
  throw first;
}

export function createRuntimePoller(opts: RuntimePollerOptions): RuntimePoller {
  const now = opts.now ?? Date.now;
  const connect = opts.connect ?? ((p: string) => createCriClient(p, { timeoutMs: opts.timeoutMs ?? DEFAULT_CRI_TIMEOUT_MS }));
  const topic = createTopic<RuntimeSnapshotListener>((err) => opts.logger?.error({ err: err instanceof Error ? err.message : String(err) }, 'a runtime follower failed'));
  let client: CriClient | null = null;
  let version: RuntimeVersion | null = null;
  let answeringSinceMs: number | null = null;
  let latest: RuntimeSnapshot | null = null;
  /** What PodSandboxStatus said of each listed sandbox, with the state it was asked in. */
  const details = new Map<string, RuntimeSandbox>();
  let timer: NodeJS.Timeout | null = null;
  let running = false;
  let inFlight: Promise<RuntimeSnapshot> | null = null;

  const drop = () => {
    client?.close();
    client = null;
    version = null;
  };

  /** The one kept, or a new one whose runtime answers Version. */
  const connected = async (): Promise<CriClient> => {
    if (client) return client;
    const c = await connectRuntime(opts.endpoint, connect);
    version = c.version;
    client = c.client;
    return client;
  };

  const refreshDetails = async (c: CriClient, listed: readonly RuntimeSandbox[]): Promise<RuntimeSandbox[]> => {
    const ids = new Set(listed.map((s) => s.id));
    for (const id of details.keys()) if (!ids.has(id)) details.delete(id);
    let asked = 0;
    let failing = false;
    const out: RuntimeSandbox[] = [];
    for (const s of listed) {
      const known = details.get(s.id);
      if ((known === undefined || known.state !== s.state) && asked < MAX_DETAILS_PER_POLL && !failing) {
        asked++;
        try {
          // null: removed between the list and this; it goes from the next list.
          const status = await c.podSandboxStatus(s.id);
          if (status) details.set(s.id, { ...s, ip: status.ip, additionalIps: status.additionalIps });
        } catch {
          // A runtime that hangs on one would on the next too: the rest wait for the next poll.
          failing = true;
        }
      }
      const d = details.get(s.id);
      out.push(d ? { ...s, ip: d.ip, additionalIps: d.additionalIps } : s);
    }
    return out;
  };

  const poll = async (): Promise<RuntimeSnapshot> => {
    const atMs = now();
    let conditions: RuntimeCondition[] | null = null;
    let sandboxes: RuntimeSandbox[] | null = null;
    let listedAtMs: number | null = null;
    let problem: RuntimeProblem | null = null;
    let endpoint: string | null = opts.endpoint.kind === 'fixed' ? opts.endpoint.path : null;
    try {
      const c = await connected();
      endpoint = c.endpoint;
      if (c.takeDropped()) {
        // It went away and came back between two polls: a restart, counted from now like any start.
        answeringSinceMs = null;
        details.clear();
        version = await c.version();
        opts.logger?.info({ endpoint }, 'the container runtime dropped its connection: taken for a restart');
      }
      conditions = (await c.status()).conditions;
      answeringSinceMs ??= atMs;
      try {
        listedAtMs = now();
        sandboxes = await refreshDetails(c, await c.listPodSandbox());
      } catch (err) {
        listedAtMs = null;
        problem = toProblem(err);
      }
    } catch (err) {
      problem = toProblem(err);
      answeringSinceMs = null;
      details.clear();
      // Asked afresh next time: a restarted runtime, or another of the usual sockets.
      drop();
    }
    const reachable = conditions !== null;
    const redact = opts.redact;
    if (sandboxes !== null && redact) sandboxes = sandboxes.map((s) => ({ ...s, labels: redact(s.labels), annotations: redact(s.annotations) }));
    const snapshot: RuntimeSnapshot = { atMs, endpoint, reachable, version: reachable ? version : null, conditions, sandboxes, listedAtMs, problem, answeringSinceMs };
    if (latest === null || latest.reachable !== reachable || latest.problem?.kind !== problem?.kind) {
      if (reachable) opts.logger?.info({ endpoint, runtime: version?.name, version: version?.version }, 'the container runtime answers the CRI');
      else opts.logger?.warn({ endpoint, problem: problem?.kind, err: problem?.message }, 'the container runtime cannot be asked');
    }
    latest = snapshot;
    topic.publish((l) => l.onRuntimeSnapshot(snapshot));
    return snapshot;
  };

  const pollOnce = (): Promise<RuntimeSnapshot> => {
    inFlight ??= poll().finally(() => (inFlight = null));
    return inFlight;
  };

  const schedule = () => {
    if (!running) return;
    timer = setTimeout(() => void pollOnce().finally(schedule), opts.intervalMs);
    timer.unref();
  };

  return {
    subscribe: (l) => topic.subscribe(l),
    latest: () => latest,
    pollOnce,
    start() {
      if (running) return;
      running = true;
      if (opts.endpoint.kind === 'off') {
        void pollOnce();
        return;
      }
      void pollOnce().finally(schedule);
    },
    stop() {
      running = false;
      if (timer) clearTimeout(timer);
      timer = null;
      drop();
    },
  };
}

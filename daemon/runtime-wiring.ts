/**
 * The runtime's side in the daemon: the poller (collector/runtime) asks the
 * node's container runtime over the CRI on its own timer, beside the tracer
 * and never on the record's path; the tracker (store/runtime) keeps what it
 * says. A change of readiness is logged; the API reads the tracker.
 */

import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import type { RuntimeDeps } from '../api/index.js';
import { createRuntimePoller, leakTimingFor, type Redactor } from '../collector/index.js';
import { createRuntimeTracker, toStoreError } from '../store/index.js';
import type { DaemonConfig } from './config.js';

export interface RuntimeWiring {
  readonly api: RuntimeDeps;
  /** For the cache store: the runtime judges this container's attachments, so `leaked-ip` does not guess. */
  judges(containerId: string | null): boolean;
  start(): void;
  stop(): void;
}

export function createRuntimeWiring(
  db: Database,
  config: Pick<DaemonConfig, 'criEndpoint' | 'criPollInterval' | 'db'>,
  log: Logger,
  opts: { readonly redactor: Redactor; readonly cacheReady: () => boolean },
): RuntimeWiring {
  let lastError: string | null = null;
  const tracker = createRuntimeTracker(db, {
    timing: leakTimingFor(config.criPollInterval),
    cacheReady: opts.cacheReady,
    onError: (err) => {
      const e = toStoreError(err, config.db, "record the runtime's state in");
      if (e.message !== lastError) log.error({ code: e.code, err: e.message }, "cannot record the runtime's state; it goes on in memory");
      lastError = e.message;
    },
  });
  const poller = createRuntimePoller({ endpoint: config.criEndpoint, intervalMs: config.criPollInterval, logger: log, redact: opts.redactor.stringMap });
  poller.subscribe(tracker);
  tracker.subscribe({
    onRuntimeReadiness({ view }) {
      const net = view.conditions.find((c) => c.type === 'NetworkReady');
      const fields = { endpoint: view.endpoint, reachable: view.reachable, conditions: view.conditions.map((c) => `${c.type}=${c.status}`).join(','), reason: net?.reason, msg: net?.message };
      if (view.reachable && net && !net.status) log.warn(fields, 'the runtime reports NetworkReady=false: the node is NotReady');
      else log.info(fields, "the runtime's readiness changed");
    },
  });
  return {
    api: {
      view: () => tracker.view(),
      subscribe: (l) => tracker.subscribe(l),
      sandboxes: (ids) => tracker.sandboxes(ids),
      sandboxesOfPod: (ns, name) => tracker.sandboxesOfPod(ns, name),
      gcPlan: () => tracker.gcPlan(),
      leakedByNetwork: () => tracker.leakedByNetwork(),
    },
    judges: (id) => tracker.judges(id),
    start: () => poller.start(),
    stop: () => poller.stop(),
  };
}

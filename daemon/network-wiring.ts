/**
 * The heartbeat sieve in the daemon (store/network/heartbeat-sieve.ts):
 * subscribed to the collector in the store writer's place, it names each
 * call's network and folds healthy STATUS heartbeats into readiness; the
 * writer, binary provenance and OTLP export subscribe to what it keeps. A
 * timer resolves a flapping finding once its window has passed.
 */

import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import type { ReadinessDeps } from '../api/index.js';
import type { CallListener } from '../collector/index.js';
import { createHeartbeatSieve, toStoreError } from '../store/index.js';

const TICK_MS = 5_000;

export interface NetworkWiring {
  /** Subscribe it to the collector. */
  readonly listener: CallListener;
  /** Hears what is kept, each call named by its network. */
  subscribe(listener: CallListener): () => void;
  readonly api: ReadinessDeps;
  start(): void;
  stop(): void;
}

export function createNetworkWiring(db: Database, file: string, opts: { readonly slowMs: number }, log: Logger): NetworkWiring {
  // Say a failing write once per cause (a full disk fails them all).
  let lastError: string | null = null;
  const sieve = createHeartbeatSieve(db, {
    slowMs: opts.slowMs,
    onError: (err) => {
      const e = toStoreError(err, file, 'record CNI STATUS readiness in');
      if (e.message !== lastError) log.error({ code: e.code, err: e.message }, 'cannot record CNI STATUS readiness; it goes on in memory');
      lastError = e.message;
    },
  });
  sieve.subscribeReadiness({
    onReadiness(event) {
      if (event.type !== 'change') return;
      const n = event.readiness;
      const fields = { network: n.network, ready: n.ready, plugin: n.failing?.plugin ?? null, code: n.failing?.error?.code ?? null, msg: n.failing?.error?.msg ?? null };
      if (n.ready === false) log.warn(fields, 'a CNI network is not ready (STATUS fails): the runtime reports the node NotReady');
      else log.info(fields, 'a CNI network is ready (STATUS succeeds)');
    },
  });
  let timer: NodeJS.Timeout | null = null;
  return {
    listener: sieve,
    subscribe: (listener) => sieve.subscribe(listener),
    api: { networks: () => sieve.networks(), subscribe: (listener) => sieve.subscribeReadiness(listener) },
    start() {
      timer ??= setInterval(() => sieve.tick(Date.now()), TICK_MS);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
}

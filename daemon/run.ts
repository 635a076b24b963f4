/**
 * `cnirec run`: the daemon. Checks the machine, opens the store, starts the
 * API (so /healthz answers from the start), then the tracer; stops in that
 * order's reverse on SIGTERM/SIGINT.
 */

import type { Logger } from 'pino';
import { buildApp } from '../api/index.js';
import { createCollector, runPreflight, createRedactor, scopeEvents, type CallListener } from '../collector/index.js';
import { createCallStore, openDatabase, writeTimingFor } from '../store/index.js';
import { createRetentionWiring } from './retention-wiring.js';
import { resolveToken, type DaemonConfig } from './config.js';
import { createStoreWiring } from './store-wiring.js';
import { recordGaps } from './tracer-log.js';
import { createCacheWiring } from './cache-wiring.js';
import { createFindingsWiring } from './findings-wiring.js';
import { createNodeSetupWiring } from './node-setup-wiring.js';
import { buildInfo } from './build-info.js';
import { createOtelWiring } from './otel-wiring.js';
import { createCaptureWiring } from './capture-wiring.js';
import { createNetworkWiring } from './network-wiring.js';
import { findUiDir } from './ui-dir.js';
import { createBundleWiring, nodeName } from './bundle-wiring.js';
import { createRuntimeWiring } from './runtime-wiring.js';

const SHUTDOWN_BUDGET_MS = 5000;

/** `recentLogLines`: the daemon's last log lines, for bundles (daemon/log-ring.ts). */
export async function runDaemon(config: DaemonConfig, log: Logger, recentLogLines: () => readonly string[] = () => []): Promise<number> {
  const token = resolveToken(config);
  const problems = runPreflight({ bpftracePath: config.bpftrace, mountTracefs: config.mountTracefs });
  if (problems.length > 0) {
    for (const p of problems) log.fatal({ check: p.check }, p.message);
    return 2;
  }

  const db = openDatabase(config.db);
  // Before the sweep below, so the calls it marks incomplete are exported too.
  const otel = createOtelWiring(db, config.otlp, log.child({ component: 'otel' }));
  const store = createCallStore(db);
  try {
    const recovered = store.markRunningAsIncomplete('cnirec stopped while the call ran');
    if (recovered > 0) log.warn({ calls: recovered }, 'calls left running by the previous run are marked incomplete');
  } catch (err) {
    // A full or read-only disk must not stop the daemon from starting (a crash loop records nothing):
    // those calls stay `running` until a later start can mark them.
    log.error({ err: err instanceof Error ? err.message : String(err) }, 'cannot mark the calls the previous run left running as incomplete');
  }

  // Retention: runs beside ingest from the start; its first run may catch up on a long downtime.
  const retention = createRetentionWiring(db, config, log.child({ component: 'retention' }));

  const redactor = createRedactor({ keys: config.redactKeys, keysExcept: config.redactKeysExcept, pointers: config.redactPointers });
  // The container runtime (CRI): asked beside the tracer once it records; it judges leaks once the cache is read.
  const runtime = createRuntimeWiring(db, config, log.child({ component: 'runtime' }), {
    redactor,
    cacheReady: () => cache.reader === null || cache.reader.reconciledAtMs() !== null,
  });
  // The CNI cache: its store side now (the API reads it), the watcher after the tracer.
  const cache = createCacheWiring(db, config, log.child({ component: 'cache' }), redactor, (id) => runtime.judges(id));

  const writes = createStoreWiring(store, log.child({ component: 'store' }));
  // DEL/ADD loops: found in the calls alone, cache or not.
  const findings = createFindingsWiring(db, config.db, log.child({ component: 'findings' }));

  // Which mode the tracer runs (auto: light until payloads pay off), switched as calls fail and loops open.
  const capture = createCaptureWiring({
    policy: { configured: config.capture, quietMs: config.captureQuiet, slowMs: config.captureSlow },
    tracerMode: () => collector.status().mode,
    setTracerMode: (mode) => collector.setMode(mode),
    openLoops: () => {
      try {
        const open = findings.reader.countOpenFindings();
        return (open['add-loop'] ?? 0) + (open['del-loop'] ?? 0);
      } catch {
        return 0; // an unreadable database is reported by the store; auto goes on with the calls it hears
      }
    },
    log: log.child({ component: 'capture' }),
  });

  const collector = createCollector({
    tracer: { bpftracePath: config.bpftrace, mode: capture.initialMode(), perfBufferPages: config.perfBufferPages },
    logger: log.child({ component: 'collector' }),
    finalizeGraceMs: config.finalizeGraceMs,
    maxStreamBytes: config.maxStreamBytes,
    redactor,
  });
  // Every way out of the process (process.exit on the shutdown deadline, an uncaught error) ends bpftrace
  // first; a death without an 'exit' event (SIGKILL) is covered by the kernel (setpriv --pdeathsig).
  const killTracers = () => collector.killNow();
  process.once('exit', killTracers);
  // Under an operator's scoped `full`, calls outside the scope lose their payloads before anyone sees them.
  const subscribeScoped = (listener: CallListener) => collector.subscribe({ onEvents: (events) => listener.onEvents(scopeEvents(events, capture.scope())) });
  collector.subscribe(capture.callListener);
  // Every call named by its network, healthy STATUS heartbeats folded into readiness: what is stored hears only what it keeps.
  const network = createNetworkWiring(db, config.db, { slowMs: config.captureSlow }, log.child({ component: 'readiness' }));
  subscribeScoped(network.listener);
  network.subscribe(writes.listener);
  // The node's CNI setup: conf dir history, which binary each call ran (hashed off the capture path), doctor checks.
  const nodeSetup = createNodeSetupWiring(db, config, log.child({ component: 'node-setup' }), redactor);
  network.subscribe(nodeSetup.callListener);
  // After the writer: a finished call is in the database by the time the exporter hears of it.
  if (otel) network.subscribe(otel.listener);
  collector.subscribeTracer(recordGaps(writes));

  const uiDir = findUiDir();
  if (uiDir === null) log.warn('the web view is not built (dist/ui/ is missing): /ui/ will say so; run `npm run build`');
  const app = await buildApp({
    tracerStatus: () => collector.status(),
    collectorStats: () => collector.stats(),
    storeStatus: () => writes.status(),
    store,
    token,
    setCaptureMode: async (mode) => void (await capture.request({ setting: mode, forMs: null, scope: null })),
    capture,
    subscribe: subscribeScoped,
    subscribeStored: (listener) => network.subscribe(listener),
    subscribeTracer: (listener) => collector.subscribeTracer(listener),
    logger: log.child({ component: 'api' }),
    cache: cache.api,
    findings: findings.reader,
    retentionStatus: () => retention.status(),
    writeTiming: writeTimingFor(db),
    nodeCni: nodeSetup.api,
    readiness: network.api,
    runtime: runtime.api,
    subscribeConf: (listener) => nodeSetup.subscribeConf(listener),
    version: buildInfo().version,
    uiDir,
    source: () => ({ kind: 'node', node: nodeName(), cnirec: buildInfo().version, bundle: null }),
    // Bundles of the record (GET /api/v1/bundle, `cnirec bundle`, the web view's download).
    bundle: createBundleWiring(config, redactor, recentLogLines),
    ...(otel ? { otelStatus: () => otel.status() } : {}),
  });
  const url = await app.listen({ host: config.listen.host, port: config.listen.port });
  log.info({ url, db: config.db, capture: config.capture }, 'cnirec API listening');
  retention.start();
  otel?.start();

  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      log.info('stopping');
      const deadline = setTimeout(() => {
        log.error('shutdown took too long; exiting');
        collector.killNow();
        process.exit(1);
      }, SHUTDOWN_BUDGET_MS);
      // No new export passes from here; one in flight finishes (or is sent again next start) before the database closes.
      const otelStopped = otel?.stop();
      capture.stop();
      await app.close();
      await collector.stop();
      await cache.stop();
      await nodeSetup.stop();
      findings.stop();
      network.stop();
      runtime.stop();
      await retention.stop(); // Retention: waits for a run to stop between two short steps
      writes.recordTracerEvent('stopped', {});
      if (!writes.flush()) log.error({ pendingWrites: writes.status().pendingWrites }, 'the database is not writable: calls kept in memory are lost');
      writes.stop();
      await otelStopped;
      store.close();
      clearTimeout(deadline);
      process.removeListener('exit', killTracers);
    })();
    return stopping;
  };

  const stopped = new Promise<void>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      log.info({ signal }, 'signal received');
      void stop().then(resolve);
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  });

  try {
    await collector.start();
    writes.recordTracerEvent('started', { mode: collector.status().mode, capture: config.capture });
    capture.start();
    await cache.start(); // CNI cache: never throws; unusable files and directories become findings
    findings.start();
    network.start();
    await nodeSetup.start(); // never throws: unreadable dirs and files are logged and retried
    runtime.start(); // never throws: a runtime that cannot be asked is a state, polled again
  } catch (err) {
    log.fatal({ err: err instanceof Error ? err.message : String(err) }, 'the tracer could not start');
    await stop();
    return 3;
  }
  await stopped;
  return 0;
}

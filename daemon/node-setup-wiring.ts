/**
 * The daemon's side of the node's CNI setup, kept out of run.ts: the conf
 * dir watcher and the conf history it feeds, binary provenance for every
 * call (hashed off the capture path), the findings "config changed before
 * failures" and GC leftovers on a timer, and the doctor's report for the
 * API and /metrics.
 */

import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import type { NodeCniDeps, NodeCniStatus } from '../api/index.js';
import {
  createBinaryHasher,
  createConfWatcher,
  confDirsToWatch,
  diagnose,
  readNode,
  type CallListener,
  type CollectorEvent,
  type ConfListener,
  type ConfWatcher,
  type Redactor,
  type Requested,
} from '../collector/index.js';
import { createConfHistory, createConfigFailureDetector, createGcChecks, createPluginBinaries, createRecordKnowledge } from '../store/index.js';
import { createTopic } from '../lib/index.js';
import type { DaemonConfig } from './config.js';

/** Findings from calls and conf versions: a look every few seconds is soon enough. */
const DETECT_INTERVAL_MS = 5_000;
/** The report behind /metrics is refreshed this often (and after each conf change). */
const REPORT_INTERVAL_MS = 60_000;
/** Calls waiting for their binary to be identified; beyond this they are counted and skipped. */
const MAX_BINARY_QUEUE = 10_000;

export interface NodeSetupWiring {
  readonly api: NodeCniDeps;
  /** Subscribe it to the collector: it queues each new call's binary for identification. */
  readonly callListener: CallListener;
  subscribeConf(listener: ConfListener): () => void;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function createNodeSetupWiring(
  db: Database,
  config: Pick<DaemonConfig, 'cniConfDir' | 'cniBinDir' | 'cacheRescanMs'>,
  log: Logger,
  redactor?: Redactor,
): NodeSetupWiring {
  const requested: Requested = { confDirs: config.cniConfDir, binDirs: config.cniBinDir };
  const history = createConfHistory(db);
  const binaries = createPluginBinaries(db);
  const record = createRecordKnowledge(db);
  const gc = createGcChecks(db);
  const configFailures = createConfigFailureDetector(db);
  const hasher = createBinaryHasher();
  const followers = createTopic<ConfListener>((err) => log.error({ err }, 'a CNI conf follower failed; its events are dropped'));
  const changes = { added: 0, changed: 0, removed: 0 };
  let watcher: ConfWatcher | null = null;
  let watchedFiles = 0;
  let lastProblems = { error: 0, warning: 0 };
  let lastReportAtMs: number | null = null;
  let timers: NodeJS.Timeout[] = [];
  let lastError: string | null = null;

  const say = (what: string, err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    if (message !== lastError) log.error({ err: message }, what);
    lastError = message;
  };

  const report = () => {
    const nowMs = Date.now();
    const r = diagnose(readNode({ requested, env: process.env }), record.read(nowMs), nowMs);
    lastProblems = { error: r.problems.filter((p) => p.severity === 'error').length, warning: r.problems.filter((p) => p.severity === 'warning').length };
    lastReportAtMs = nowMs;
    return { ...r, watchedConfDirs: watcher?.dirs ?? [] };
  };
  const refreshReport = () => {
    try {
      report();
    } catch (err) {
      say('cannot check the node\'s CNI setup', err);
    }
  };

  // The startup scan's batch (it ends with conf.reconciled) is the node as found, not changes.
  let following = false;
  const toStore: ConfListener = {
    onConfEvents(events) {
      try {
        history.write(events);
      } catch (err) {
        // The next rescan publishes these files again.
        for (const ev of events) if (ev.type === 'conf.version') watcher?.forget(ev.version.path);
        say('cannot record CNI conf changes; retrying at the next rescan', err);
        return;
      }
      const startup = !following;
      for (const ev of events) {
        if (ev.type === 'conf.reconciled') {
          watchedFiles = ev.livePaths.length;
          following = true;
        } else if (startup) continue;
        else if (ev.type === 'conf.version') {
          changes[ev.previous ? 'changed' : 'added']++;
          watchedFiles += ev.previous ? 0 : 1;
          log.info({ path: ev.version.path, network: ev.version.network, parseError: ev.version.parseError }, ev.previous ? 'CNI conf file changed' : 'CNI conf file added');
        } else {
          changes.removed++;
          watchedFiles = Math.max(0, watchedFiles - 1);
          log.info({ path: ev.path }, 'CNI conf file removed');
        }
      }
      if (startup) return;
      followers.publish((f) => f.onConfEvents(events));
      refreshReport();
    },
  };

  // Binary provenance: the listener only queues; one worker stats and hashes, off the capture path.
  const queue: { callId: string; path: string; startedAtUs: number }[] = [];
  // Calls queued at their start and not finished yet: each call is queued once.
  const running = new Set<string>();
  let dropped = 0;
  let working = false;
  const work = async () => {
    if (working) return;
    working = true;
    try {
      for (let item = queue.shift(); item; item = queue.shift()) {
        const version = await hasher.identify(item.path).catch(() => null);
        if (!version) continue;
        try {
          binaries.link(item.callId, item.startedAtUs, version, Date.now());
        } catch (err) {
          say('cannot record which plugin binary a call ran', err);
        }
      }
    } finally {
      working = false;
    }
  };
  const callListener: CallListener = {
    onEvents(events: readonly CollectorEvent[]) {
      for (const { type, call } of events) {
        // An update is a call linked already when it ended.
        if (type === 'call.updated') continue;
        if (type === 'call.started') {
          if (running.has(call.id)) continue;
          running.add(call.id);
        } else if (running.delete(call.id)) continue;
        if (queue.length >= MAX_BINARY_QUEUE) dropped++;
        else queue.push({ callId: call.id, path: call.path, startedAtUs: call.startedAtUs });
      }
      if (queue.length > 0 && !working) setImmediate(() => void work());
    },
  };

  const status = (): NodeCniStatus => ({
    confDirs: watcher?.dirs ?? [],
    watchedFiles,
    changes: { ...changes },
    problems: lastProblems,
    lastReportAtMs,
    binariesHashed: hasher.hashed,
    binaryQueueDropped: dropped,
  });

  return {
    api: {
      report,
      record: () => record.read(Date.now()),
      history,
      binaries,
      gc,
      status,
    },
    callListener,
    subscribeConf: (listener) => followers.subscribe(listener),
    async start() {
      const dirs = confDirsToWatch({ requested, env: process.env });
      watcher = createConfWatcher({
        dirs,
        logger: log.child({ component: 'conf-watcher' }),
        rescanIntervalMs: config.cacheRescanMs,
        ...(redactor ? { redact: (bytes: Buffer) => redactConf(redactor, bytes) } : {}),
      });
      watcher.subscribe(toStore);
      await watcher.start();
      const detect = () => {
        const now = Date.now();
        try {
          configFailures.detect(now);
          gc.detect(now);
        } catch (err) {
          say('cannot update the CNI setup findings; retrying', err);
        }
      };
      timers = [setInterval(detect, DETECT_INTERVAL_MS), setInterval(refreshReport, REPORT_INTERVAL_MS)];
      for (const t of timers) t.unref();
      refreshReport();
    },
    async stop() {
      for (const t of timers) clearInterval(t);
      timers = [];
      await watcher?.stop();
    },
  };
}

/** Conf files go through the same JSON redaction as payloads: the same stream shape, the same rules. */
export function redactConf(redactor: Redactor, bytes: Buffer): { bytes: Buffer; pointers: readonly string[] } | null {
  const out = redactor.stream({ bytes, totalBytes: bytes.length, truncated: false });
  return out.bytes === bytes ? null : { bytes: out.bytes, pointers: out.redactions ?? [] };
}


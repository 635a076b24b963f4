/**
 * The live tail's single subscription to the collector (and to the cache
 * watcher, for cache.added/cache.removed). Each event becomes a
 * CallSummary once and, if anyone wants it, one encoded frame that every
 * matching client shares. Delivery only appends to per-client outboxes, so
 * the collector's publish never waits on a socket, however slow.
 */

import type { CacheListener, CallListener, CniCall, CollectorEvent, TracerEvent, TracerEventListener } from '../../collector/index.js';
import { createTopic, isoFromMs, isoFromUs } from '../../lib/index.js';
import { failureFromStreams } from '../present/call-error.js';
import { summaryFromLive } from '../present/call-summary.js';
import type { CallSummary } from '../schemas/call-summary.js';
import { createCacheFeed, matchesCacheFilter, type TailCacheMessage } from './tail-cache.js';
import { matchesFilter, type TailFilter } from './tail-filter.js';
import { encodeMessage, type CallEventType, type TailGap } from './tail-messages.js';
import type { TailStats } from './tail-stats.js';
import type { CaptureListener, ConfEvent, ConfListener } from '../../collector/index.js';
import type { ReadinessEvent, ReadinessListener, RuntimeReadinessEvent, RuntimeReadinessListener } from '../../store/index.js';
import { presentReadiness } from '../present/readiness.js';
import { presentRuntime } from '../present/runtime.js';

export interface TailSubscriber {
  /** Read at every event, so a client's new filter applies from the next event on. */
  readonly filter: TailFilter;
  deliver(type: CallEventType, call: CallSummary, frame: Buffer): void;
  /** Cache messages; a subscriber without this does not get them. */
  deliverCache?(message: TailCacheMessage, frame: Buffer): void;
  /** Node-wide messages every client gets (`tracer.gap`, `config.changed`, `capture.changed`, `network.readiness`, `runtime.readiness`); a subscriber without this does not get them. */
  deliverTracer?(frame: Buffer): void;
}

export interface TailHub extends CallListener, CacheListener, TracerEventListener, ConfListener, CaptureListener, ReadinessListener, RuntimeReadinessListener {
  /** Starts delivering to `subscriber`; returns the function that stops it. */
  add(subscriber: TailSubscriber): () => void;
  /** A client was dropped for being too slow, losing `messages` messages. */
  recordDrop(messages: number): void;
  stats(): TailStats;
}

export interface TailHubOptions {
  /** Where a subscriber that throws is reported; the others still get the event. */
  readonly onSubscriberError?: (err: unknown) => void;
}

/** A finished call that failed: what it said (only those are parsed). */
function liveFailure(c: CniCall): string | null {
  const failed = c.outcome !== null && (c.outcome.exitCode !== 0 || c.outcome.signal !== null);
  return failed ? failureFromStreams(c.stdout.bytes, c.stderr.bytes) : null;
}

export function createTailHub(options: TailHubOptions = {}): TailHub {
  const subscribers = createTopic<TailSubscriber>((err) => options.onSubscriberError?.(err));
  let droppedClients = 0;
  let droppedMessages = 0;

  const fanOut = (event: CollectorEvent) => {
    const call = summaryFromLive(event.call, liveFailure(event.call));
    // Encoded lazily: an event no client wants costs one summary, not a JSON string.
    let frame: Buffer | null = null;
    subscribers.publish((subscriber) => {
      if (!matchesFilter(call, subscriber.filter)) return;
      frame ??= encodeMessage({ type: event.type, call });
      subscriber.deliver(event.type, call, frame);
    });
  };

  // Fed even with no client connected: it must know every live file to describe a later removal.
  const cacheFeed = createCacheFeed();
  const fanOutCache = (message: TailCacheMessage) => {
    let frame: Buffer | null = null;
    subscribers.publish((subscriber) => {
      if (subscriber.deliverCache === undefined || !matchesCacheFilter(message.entry, subscriber.filter)) return;
      frame ??= encodeMessage(message);
      subscriber.deliverCache(message, frame);
    });
  };

  const toEveryone = (frame: Buffer) => subscribers.publish((subscriber) => subscriber.deliverTracer?.(frame));

  return {
    onConfEvents(events: readonly ConfEvent[]) {
      if (subscribers.size === 0) return;
      for (const ev of events) {
        if (ev.type === 'conf.reconciled') continue;
        const change =
          ev.type === 'conf.removed'
            ? { path: ev.path, dir: ev.dir, change: 'removed' as const, network: null, sha256: null, parseError: null, at: isoFromMs(ev.atMs) }
            : {
                path: ev.version.path,
                dir: ev.version.dir,
                change: ev.previous ? ('changed' as const) : ('added' as const),
                network: ev.version.network,
                sha256: ev.version.sha256,
                parseError: ev.version.parseError,
                at: isoFromMs(ev.atMs),
              };
        toEveryone(encodeMessage({ type: 'config.changed', change }));
      }
    },
    onReadiness(event: ReadinessEvent) {
      if (event.type !== 'change' || subscribers.size === 0) return;
      toEveryone(encodeMessage({ type: 'network.readiness', readiness: presentReadiness(event.readiness) }));
    },
    onRuntimeReadiness(event: RuntimeReadinessEvent) {
      if (subscribers.size === 0) return;
      toEveryone(encodeMessage({ type: 'runtime.readiness', runtime: presentRuntime(event.view) }));
    },
    onCaptureChanged(capture) {
      if (subscribers.size === 0) return;
      toEveryone(encodeMessage({ type: 'capture.changed', capture }));
    },
    onTracerEvent(event: TracerEvent) {
      if (subscribers.size === 0) return;
      toEveryone(encodeMessage({ type: 'tracer.gap', gap: tailGap(event) }));
    },
    onCacheEvents(events) {
      const messages = cacheFeed.messagesOf(events);
      if (subscribers.size === 0) return;
      for (const message of messages) fanOutCache(message);
    },
    onEvents(events) {
      if (subscribers.size === 0) return;
      for (const event of events) fanOut(event);
    },
    add: (subscriber) => subscribers.subscribe(subscriber),
    recordDrop(messages) {
      droppedClients++;
      droppedMessages += messages;
    },
    stats: () => ({ clients: subscribers.size, droppedClients, droppedMessages }),
  };
}

function tailGap({ gap }: TracerEvent): TailGap {
  return {
    startedAt: isoFromUs(gap.startedAtUs),
    endedAt: gap.endedAtUs === null ? null : isoFromUs(gap.endedAtUs),
    durationMs: gap.endedAtUs === null ? null : Math.round((gap.endedAtUs - gap.startedAtUs) / 1000),
    reason: gap.reason,
    incompleteCalls: gap.incompleteCalls,
  };
}

/**
 * The last stage of the record path, publish: call events wait in its one
 * buffer and go to every call subscriber (the store, the live tail,
 * capture's auto policy) in small batches, redacted once on the way; the
 * tracer's own events (its gaps) to every tracer subscriber. A subscriber
 * that throws is logged and the others still hear.
 */

import type { Logger } from 'pino';
import { createTopic } from '../lib/index.js';
import type { Redactor } from './redact/redact-events.js';
import type { CallListener, CollectorEvent, TracerEvent, TracerEventListener, TracerGap } from './types.js';

export interface Publisher {
  subscribe(listener: CallListener): () => void;
  subscribeTracer(listener: TracerEventListener): () => void;
  /** A call event to hand on: it goes out right after the current I/O callback, with the others of it. */
  emit(event: CollectorEvent): void;
  /** Hands on what is pending now. */
  deliver(): void;
  /** A gap began or ended (nothing when null). */
  announceGap(gap: TracerGap | null): void;
}

export function createPublisher(log: Logger, redactor: Redactor | undefined): Publisher {
  const calls = createTopic<CallListener>((err) => log.error({ err }, 'a call subscriber failed; its events are dropped'));
  const tracer = createTopic<TracerEventListener>((err) => log.error({ err }, 'a tracer event subscriber failed'));
  let pending: CollectorEvent[] = [];
  let deliveryScheduled = false;

  const deliver = () => {
    deliveryScheduled = false;
    if (pending.length === 0) return;
    // Redacted here, once per event, so the store and the live tail get the same bytes and neither the raw ones.
    const batch = redactor ? redactor.callEvents(pending) : pending;
    pending = [];
    calls.publish((l) => l.onEvents(batch));
  };

  return {
    subscribe: (listener) => calls.subscribe(listener),
    subscribeTracer: (listener) => tracer.subscribe(listener),
    emit(event) {
      pending.push(event);
      // Deliver right after the current I/O callback instead of at the next publish tick: events of
      // one chunk of tracer output still go out as one batch, and the live tail gets them ~12 ms sooner.
      if (!deliveryScheduled) {
        deliveryScheduled = true;
        setImmediate(deliver);
      }
    },
    deliver,
    announceGap(gap) {
      if (gap === null) return;
      const event: TracerEvent = { type: 'tracer.gap', gap };
      tracer.publish((l) => l.onTracerEvent(event));
    },
  };
}

/**
 * One publisher, many subscribers, none of which can hurt the publisher or
 * each other: a subscriber that throws is reported and the others still get
 * the message. Every fan-out in the daemon goes through one of these: the
 * collector's calls and tracer events, the cache watcher's changes, the live
 * tail's clients, the store's write observers.
 *
 * Delivery is synchronous and in subscription order: a subscriber that must
 * not hold the publisher up (a websocket) keeps its own bounded queue.
 */

export interface Topic<L> {
  /** Adds `subscriber` (once, however often it is added); returns the function that removes it. */
  subscribe(subscriber: L): () => void;
  /**
   * Calls `deliver` for each subscriber, in the order they subscribed. One
   * that throws is reported to the topic's `onError` with the subscriber, and
   * delivery goes on with the next.
   */
  publish(deliver: (subscriber: L) => void): void;
  /** Subscribers now: lets a publisher skip building a message nobody would get. */
  readonly size: number;
}

export function createTopic<L>(onError: (err: unknown, subscriber: L) => void): Topic<L> {
  const subscribers = new Set<L>();
  return {
    subscribe(subscriber) {
      subscribers.add(subscriber);
      return () => void subscribers.delete(subscriber);
    },
    publish(deliver) {
      for (const s of subscribers) {
        try {
          deliver(s);
        } catch (err) {
          try {
            onError(err, s);
          } catch {
            // A failing report must not stop delivery to the others either.
          }
        }
      }
    },
    get size() {
      return subscribers.size;
    },
  };
}

/** A topic whose messages are batches: events are added as they are found and go out together at `flush`. */
export interface BatchTopic<E, L> {
  subscribe(subscriber: L): () => void;
  add(event: E): void;
  /** Publishes what was added since the last flush, as one batch; nothing when nothing was. */
  flush(): void;
}

export function createBatchTopic<E, L>(deliver: (subscriber: L, batch: readonly E[]) => void, onError: (err: unknown, subscriber: L) => void): BatchTopic<E, L> {
  const topic = createTopic<L>(onError);
  let pending: E[] = [];
  return {
    subscribe: (subscriber) => topic.subscribe(subscriber),
    add: (event) => void pending.push(event),
    flush() {
      if (pending.length === 0) return;
      const batch = pending;
      pending = [];
      topic.publish((s) => deliver(s, batch));
    },
  };
}

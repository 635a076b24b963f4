/**
 * One tail connection from hello to close: joins the hub, answers the
 * client's `filter` and `ping` messages, and, with `?since=`, catches the
 * client up from the store before going live.
 *
 * The catch-up has no gap and no repeat: the session joins the hub first
 * and holds live events back, then sends the stored calls, then flushes
 * what it held, skipping what the replay already showed (see
 * tail-handoff.ts). Replay and flush wait for the socket to drain as they
 * go, so only live traffic can overflow a client's outbox.
 */

import type { FastifyBaseLogger } from 'fastify';
import type { WebSocket } from 'ws';
import type { CallStore } from '../../store/index.js';
import { presentStoredSummaries } from '../present/call-error.js';
import { isoFromUs } from '../../lib/index.js';
import type { CallSummary } from '../schemas/call-summary.js';
import { CLOSE_CODES, tooSlowReason } from './tail-close.js';
import { matchesCacheFilter, type TailCacheMessage } from './tail-cache.js';
import { matchesFilter, toCallFilter, type TailFilter, type TailQuery } from './tail-filter.js';
import { createHandoffLedger } from './tail-handoff.js';
import { keepAlive } from './tail-heartbeat.js';
import type { TailHub } from './tail-hub.js';
import { encodeMessage, parseClientMessage, TAIL_PROTOCOL_VERSION, type CallEventType, type ServerMessage } from './tail-messages.js';
import { createOutbox, type OutboxLimits } from './tail-outbox.js';
import { readReplay, type ReplayRead } from './tail-replay.js';

export interface TailSessionOptions {
  readonly hub: TailHub;
  readonly store: Pick<CallStore, 'listCalls' | 'failureTexts'>;
  readonly outbox: OutboxLimits;
  /** Most calls a `?since=` replay sends. */
  readonly replayLimit: number;
  readonly heartbeatMs: number;
  readonly log: FastifyBaseLogger;
}

type HeldEvent =
  | { readonly type: CallEventType; readonly call: CallSummary; readonly frame: Buffer }
  | { readonly type: 'cache'; readonly message: TailCacheMessage; readonly frame: Buffer }
  | { readonly type: 'tracer'; readonly frame: Buffer };

export function runTailSession(socket: WebSocket, query: TailQuery, opts: TailSessionOptions): void {
  let filter: TailFilter = query.filter;
  // Non-null while replaying: live events wait here until the replay is out.
  let held: HeldEvent[] | null = query.sinceUs === null ? null : [];
  let open = true;
  let leaveHub = (): void => {};

  const finish = () => {
    if (!open) return;
    open = false;
    leaveHub();
    outbox.close();
    held = null;
  };

  const giveUp = (lost: number) => {
    if (!open) return;
    const total = lost + (held?.length ?? 0);
    finish();
    opts.hub.recordDrop(total);
    opts.log.info({ dropped: total }, 'tail client too slow; closing it');
    socket.close(CLOSE_CODES.tooSlow, tooSlowReason(total));
  };

  const outbox = createOutbox(socket, opts.outbox, giveUp);
  const send = (message: ServerMessage) => outbox.send(encodeMessage(message));

  send({
    type: 'hello',
    protocol: TAIL_PROTOCOL_VERSION,
    filter,
    replay: query.sinceUs === null ? null : { since: isoFromUs(query.sinceUs), limit: opts.replayLimit },
  });

  // Live messages go out at once, or wait in `held` while a replay is being sent.
  const deliverLive = (event: HeldEvent) => {
    if (held === null) {
      outbox.send(event.frame);
    } else if (held.length >= opts.outbox.maxMessages) {
      giveUp(1 + outbox.close());
    } else {
      held.push(event);
    }
  };
  leaveHub = opts.hub.add({
    get filter() {
      return filter;
    },
    deliver: (type, call, frame) => deliverLive({ type, call, frame }),
    deliverCache: (message, frame) => deliverLive({ type: 'cache', message, frame }),
    deliverTracer: (frame) => deliverLive({ type: 'tracer', frame }),
  });

  socket.on('message', (data, isBinary) => {
    const parsed = parseClientMessage(data, isBinary);
    if (!parsed.ok) {
      send({ type: 'error', error: parsed.error });
    } else if (parsed.message.type === 'ping') {
      send({ type: 'pong' });
    } else {
      filter = parsed.message.filter;
      send({ type: 'filter.updated', filter });
    }
  });
  socket.on('close', finish);
  keepAlive(socket, opts.heartbeatMs);

  if (query.sinceUs !== null) void catchUp(query.sinceUs);

  async function catchUp(sinceUs: number): Promise<void> {
    let replay: ReplayRead;
    try {
      replay = await readReplay(opts.store, toCallFilter(filter, sinceUs), opts.replayLimit, () => !open);
    } catch (err) {
      opts.log.warn({ err }, 'tail replay failed');
      const message = err instanceof Error ? err.message : String(err);
      send({ type: 'error', error: { code: 'replay_failed', message: `Cannot read past calls: ${message}` } });
      finish();
      socket.close(CLOSE_CODES.internalError, 'replay failed');
      return;
    }

    const ledger = createHandoffLedger();
    const summaries = presentStoredSummaries(replay.calls, opts.store);
    for (const [i, row] of replay.calls.entries()) {
      if (!open) return;
      const type: CallEventType = row.status === 'running' ? 'call.started' : 'call.finished';
      send({ type, call: summaries[i]! });
      ledger.sent(row.id, type);
      if (!outbox.idle) await outbox.whenIdle();
    }
    if (!open) return;
    const oldest = replay.calls[0];
    send({
      type: 'replay.done',
      calls: replay.calls.length,
      capped: replay.capped,
      ...(replay.capped && oldest
        ? { message: `Replay capped at ${opts.replayLimit} calls: calls started from ${isoFromUs(sinceUs)} to before ${isoFromUs(oldest.startedAtUs)} were left out` }
        : {}),
    });

    // Events keep arriving while this drains: they join the end of `held`, and it only goes live once empty.
    while (open && held !== null && held.length > 0) {
      const event = held.shift() as HeldEvent;
      // The replay holds calls only: cache messages were never sent, and only the filter (maybe changed since) decides.
      if (event.type === 'tracer') {
        // Not filtered: whatever the client follows may be missing from the gap.
      } else if (event.type === 'cache') {
        if (!matchesCacheFilter(event.message.entry, filter)) continue;
      } else if (ledger.alreadySent(event.call.id, event.type) || !matchesFilter(event.call, filter)) continue;
      outbox.send(event.frame);
      if (!outbox.idle) await outbox.whenIdle();
    }
    held = null;
  }
}

/**
 * WS /api/v1/tail: calls as they start and finish, filtered like
 * /api/v1/calls, optionally caught up from the store with `?since=`; and
 * libcni cache files as they are written and removed (live only).
 * Protocol in api/tail/tail-messages.ts, close codes in api/tail/tail-close.ts.
 *
 * A bad query is refused after the upgrade, not with an HTTP 400: browsers
 * hide a refused handshake's status and body from scripts, while an `error`
 * message and close code 4400 reach every client.
 */

import websocket from '@fastify/websocket';
import type { FastifyInstance } from 'fastify';
import { WebSocket } from 'ws';
import { WS_PROTOCOL } from '../auth.js';
import type { TailDeps } from '../deps.js';
import { badQueryReason, CLOSE_CODES } from '../tail/tail-close.js';
import { plainJsonSerializer } from '../present/fast-json.js';
import { errorBodySchema, errorResponses } from '../schemas/error.js';
import { tailServerMessageSchema } from '../schemas/tail.js';
import { tailQueryFrom, tailQuerySchema } from '../tail/tail-filter.js';
import { DEFAULT_HEARTBEAT_MS } from '../tail/tail-heartbeat.js';
import { createTailHub } from '../tail/tail-hub.js';
import { describeIssues, encodeMessage, issuesOf } from '../tail/tail-messages.js';
import { DEFAULT_OUTBOX_LIMITS, type OutboxLimits } from '../tail/tail-outbox.js';
import { runTailSession } from '../tail/tail-session.js';
import { TAIL_STATS_DECORATOR, type TailStatsReader } from '../tail/tail-stats.js';

export const TAIL_PATH = '/api/v1/tail';

/** What the OpenAPI document says of the tail (it cannot describe a websocket's messages itself). */
export const TAIL_DESCRIPTION = [
  'A websocket (a plain GET answers 426). Server messages, one JSON object per text frame (TailServerMessage): hello, ',
  'call.started, call.finished (once per call), call.updated (a call already sent finished changed afterwards: late output or helpers of descendants that outlived the plugin; the whole call again), cache.added, cache.removed, tracer.gap, capture.changed (the capture mode changed, and why), network.readiness (a network became ready or not ready: CNI STATUS), runtime.readiness (a condition of the container runtime changed, or it started or stopped answering), config.changed (a CNI conf dir file added, rewritten or ',
  'removed; sent to every client), replay.done, filter.updated, pong, error. Query (and later {"type":"filter",...} messages): ',
  'namespace, pod, command, plugin, failed, includeVersion, and since (replay recent calls first, then replay.done marks where ',
  'the live calls begin). An unknown or invalid parameter is answered, after the upgrade, by an error message naming it and ',
  'close code 4400.\n\n',
  'Filters mean what they mean on GET /api/v1/calls. namespace and pod match calls and libcni cache entries alike, by the ',
  'pod taken from CNI_ARGS (K8S_POD_NAMESPACE, K8S_POD_NAME): a call or cache entry without that pod field (a plugin run ',
  'without Kubernetes pod arguments, podman\'s cache files) does not match a filter on it, so with namespace or pod set ',
  'the tail shows only that pod\'s calls and cache entries. command, plugin and failed describe calls: with any of them ',
  'set, no cache.added/cache.removed messages are sent. Cache messages are live only (never replayed by since).',
].join('');

/** Client messages are small filter requests: anything bigger is a mistake or an attack (closed with 1009). */
const DEFAULT_MAX_PAYLOAD_BYTES = 64 * 1024;
/** Enough to catch up on a busy node's last minutes without holding a huge replay in memory. */
const DEFAULT_REPLAY_LIMIT = 10_000;

/** Defaults suit the daemon; tests shrink them to reach the edges quickly. */
export interface TailOptions {
  readonly outbox?: Partial<OutboxLimits>;
  readonly replayLimit?: number;
  readonly heartbeatMs?: number;
  readonly maxPayloadBytes?: number;
}

export async function registerTail(app: FastifyInstance, deps: TailDeps, options: TailOptions = {}): Promise<void> {
  const hub = createTailHub({ onSubscriberError: (err) => app.log.error({ err }, 'delivering to a tail client failed') });
  // One subscription for all clients, for the app's lifetime.
  const unsubscribe = deps.subscribe?.(hub);
  if (unsubscribe === undefined) app.log.warn('no collector subscription: the live tail can only replay stored calls');
  const unsubscribeCache = deps.cache?.subscribe?.(hub);
  const unsubscribeTracer = deps.subscribeTracer?.(hub);
  const unsubscribeConf = deps.subscribeConf?.(hub);
  const unsubscribeCapture = deps.capture?.subscribe(hub);
  const unsubscribeReadiness = deps.readiness?.subscribe(hub);
  const unsubscribeRuntime = deps.runtime?.subscribe(hub);
  app.decorate(TAIL_STATS_DECORATOR, { read: () => hub.stats() } satisfies TailStatsReader);
  app.addHook('onClose', async () => {
    unsubscribe?.();
    unsubscribeCache?.();
    unsubscribeTracer?.();
    unsubscribeConf?.();
    unsubscribeCapture?.();
    unsubscribeReadiness?.();
    unsubscribeRuntime?.();
  });

  const sessionOptions = {
    hub,
    store: deps.store,
    outbox: { ...DEFAULT_OUTBOX_LIMITS, ...options.outbox },
    replayLimit: options.replayLimit ?? DEFAULT_REPLAY_LIMIT,
    heartbeatMs: options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
  };

  // Encapsulated: the websocket plugin's hooks and decorators stay out of the REST routes.
  await app.register(async (scope) => {
    // Registered before the plugin so it runs before the plugin's own preClose, which closes without a code.
    scope.addHook('preClose', async () => {
      for (const client of scope.websocketServer?.clients ?? []) client.close(CLOSE_CODES.goingAway, 'server shutting down');
    });

    await scope.register(websocket, {
      options: {
        maxPayload: options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES,
        perMessageDeflate: false,
        // The web view offers its protocol and its token as subprotocols (auth.ts): select the protocol, never echo the token.
        handleProtocols: (protocols) => (protocols.has(WS_PROTOCOL) ? WS_PROTOCOL : false),
      },
      // The default handler logs every peer reset at error level and terminates even a socket ws
      // is already closing (after an oversized frame, with 1009), which may cut off the close frame.
      errorHandler: (err, socket, request) => {
        request.log.debug({ err }, 'tail socket error');
        if (socket.readyState === WebSocket.OPEN) socket.terminate();
      },
    });

    scope.route({
      method: 'GET',
      url: TAIL_PATH,
      // The query is documented here but validated in wsHandler, so a bad one is reported over the socket.
      schema: {
        tags: ['tail'],
        operationId: 'tail',
        summary: 'Live tail of calls and libcni cache changes (websocket)',
        description: TAIL_DESCRIPTION,
        querystring: tailQuerySchema,
        response: {
          101: {
            description: 'The websocket: server messages (TailServerMessage) as JSON text frames; a client sends {"type":"filter", …TailFilter fields} or {"type":"ping"}',
            content: { 'application/json': { schema: tailServerMessageSchema } },
          },
          426: errorBodySchema,
          ...errorResponses(401),
        },
      },
      validatorCompiler: () => (data: unknown) => ({ value: data }),
      // Only the 426 body is ever serialized here (plain JSON); the 101 schema describes the socket's messages.
      serializerCompiler: plainJsonSerializer,
      handler: async (_request, reply) =>
        reply
          .code(426)
          .header('upgrade', 'websocket')
          .send({ error: { code: 'upgrade_required', message: `${TAIL_PATH} is a websocket: connect with a websocket client` } }),
      wsHandler: (socket, request) => {
        const parsed = tailQuerySchema.safeParse(request.query);
        if (!parsed.success) {
          const issues = issuesOf(parsed.error);
          socket.send(encodeMessage({ type: 'error', error: { code: 'bad_request', message: describeIssues('Invalid tail query', issues), issues } }));
          socket.close(CLOSE_CODES.badQuery, badQueryReason(issues));
          return;
        }
        runTailSession(socket, tailQueryFrom(parsed.data), { ...sessionOptions, log: request.log });
      },
    });
  });
}

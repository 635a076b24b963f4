/**
 * GET /api/v1/bundle: a bundle of the record (a window, pods or calls) as a
 * .tar.gz download, made by the daemon (daemon/make-bundle.ts) with its own
 * state read from its routes (health, tracer, doctor, readiness, the
 * container runtime's view and GC plan, metrics) as a client would see them.
 * One at a time: a bundle reads the whole window, and a second one at once
 * would only compete with it and with recording.
 *
 * GET /api/v1/source: what the record is of — this node, live, or a bundle
 * opened with `cnirec open` (its node, when it was taken, its window).
 */

import { createReadStream } from 'node:fs';
import os from 'node:os';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { BundleRouteDeps, DaemonReadings } from '../deps.js';
import { ApiError } from '../errors.js';
import { bundleQuerySchema, sourceSchema, type SourceBody } from '../schemas/bundle.js';
import { errorResponses } from '../schemas/error.js';

export const BUNDLE_CONTENT_TYPE = 'application/gzip';

export function registerBundle(app: FastifyInstance, deps: BundleRouteDeps): void {
  const api = app.withTypeProvider<ZodTypeProvider>();
  let making = false;

  api.get(
    '/api/v1/bundle',
    {
      schema: {
        tags: ['bundle'],
        operationId: 'getBundle',
        summary: 'A bundle of the record to take elsewhere: calls, their payloads, findings, cache and conf history, the node\'s CNI setup, the daemon\'s health and log (.tar.gz)',
        description:
          'The calls started in the window (default: the last 6 hours), of the pods given when any, and the whole tree of each call given, each with every call it delegated; ' +
          'as a SQLite database of cnirec\'s schema (`record.db`), with the node\'s CNI setup now, the daemon\'s state and a manifest.json. Open it with `cnirec open FILE`. ' +
          'One bundle is made at a time: 503 while another is being made.',
        querystring: bundleQuerySchema,
        response: {
          200: { description: 'A gzip\'d tar archive', content: { [BUNDLE_CONTENT_TYPE]: { schema: z.string() } } },
          ...errorResponses(400, 401, 404, 413, 501, 503),
        },
      },
    },
    async (request, reply) => {
      if (!deps.bundle) throw new ApiError(501, 'not_implemented', 'This server makes no bundles.');
      if (making) throw new ApiError(503, 'busy', 'A bundle is being made; ask again when it is done.', undefined, { headers: { 'retry-after': '5' } });
      making = true;
      let outcome;
      try {
        outcome = await deps.bundle.make(request.query, await readOwnState(app, request.headers.authorization));
      } finally {
        making = false;
      }
      if (!outcome.ok) throw new ApiError(outcome.status, outcome.status === 413 ? 'payload_too_large' : outcome.status === 404 ? 'not_found' : 'bad_request', outcome.message);
      const done = outcome.cleanup;
      const stream = createReadStream(outcome.file);
      stream.once('close', () => void done());
      // A stream, past the serializer: the zod type describes the file, not this object.
      return (reply as FastifyReply).type(BUNDLE_CONTENT_TYPE).header('content-disposition', `attachment; filename="${outcome.name}"`).send(stream);
    },
  );

  api.get(
    '/api/v1/source',
    {
      schema: {
        tags: ['bundle'],
        operationId: 'getSource',
        summary: 'What the record is of: this node, live; or a bundle opened with `cnirec open` (its node, when it was taken, its window)',
        response: { 200: sourceSchema, ...errorResponses(401) },
      },
    },
    async (): Promise<SourceBody> => deps.source?.() ?? { kind: 'node', node: process.env.NODE_NAME || os.hostname(), cnirec: deps.version ?? 'unknown', bundle: null },
  );
}

/** The header every answer of an opened bundle carries, so a client (the CLI) can say it reads a bundle, not a live node. */
export const BUNDLE_HEADER = 'cnirec-bundle';

/** Before the routes: every answer then says, in a header, when it comes from a bundle. */
export function registerSourceHeader(app: FastifyInstance, deps: Pick<BundleRouteDeps, 'source'>): void {
  const source = deps.source?.();
  if (!source?.bundle) return;
  const value = `node=${encodeURIComponent(source.node)}; taken-at=${source.bundle.takenAt}`;
  app.addHook('onSend', async (_request, reply, payload) => {
    void reply.header(BUNDLE_HEADER, value);
    return payload;
  });
}

/** The daemon's own answers, as a client gets them (the caller's token passed on). */
async function readOwnState(app: FastifyInstance, authorization: string | undefined): Promise<DaemonReadings> {
  const get = async (url: string): Promise<{ json: unknown; text: string } | null> => {
    const res = await app.inject({ method: 'GET', url, headers: authorization ? { authorization } : {} });
    if (res.statusCode >= 400 && !(url === '/healthz' && res.statusCode === 503)) return null;
    let json: unknown = null;
    try {
      json = res.json();
    } catch {
      // /metrics is text
    }
    return { json, text: res.body };
  };
  const routes = ['/healthz', '/api/v1/tracer', '/api/v1/node/cni', '/api/v1/node/cni/status', '/api/v1/node/runtime', '/api/v1/node/cni/gc-plan', '/metrics'];
  const [health, tracer, nodeCni, readiness, runtime, gcPlan, metrics] = await Promise.all(routes.map(get));
  return {
    health: health?.json ?? null,
    tracer: tracer?.json ?? null,
    nodeCni: nodeCni?.json ?? null,
    readiness: readiness?.json ?? null,
    runtime: runtime?.json ?? null,
    gcPlan: gcPlan?.json ?? null,
    metrics: metrics?.text ?? null,
  };
}

/**
 * GET /api/v1/calls (pages of summaries, newest first) and
 * GET /api/v1/calls/:id (one call in full).
 */

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ApiDeps } from '../app.js';
import { apiErrors } from '../errors.js';
import { presentCallDetail } from '../present/call-detail.js';
import { plainJsonSerializer } from '../present/fast-json.js';
import { callDetailSchema } from '../schemas/call-detail.js';
import { callPageSchema } from '../schemas/call-list.js';
import { callListQuerySchema, toCallFilter } from '../schemas/call-query.js';
import { summaryFromStored } from '../schemas/call-summary.js';
import { errorResponses } from '../schemas/error.js';

export const callIdParamsSchema = z.object({
  id: z.string().min(1).max(128).describe('The call id, as lists and the tail give it'),
});

export function registerCalls(app: FastifyInstance, deps: ApiDeps): void {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get(
    '/api/v1/calls',
    {
      schema: {
        tags: ['calls'],
        summary: 'List recorded calls, newest first',
        description:
          'Every filter narrows the list; VERSION probes are hidden unless includeVersion=true or command=VERSION. ' +
          'Follow nextCursor for older pages: calls recorded meanwhile never shift a page.',
        querystring: callListQuerySchema,
        response: { 200: callPageSchema, ...errorResponses(400, 401) },
      },
      // Up to 1,000 summaries a page: plain JSON.stringify (see fast-json.ts).
      serializerCompiler: plainJsonSerializer,
    },
    async (request) => {
      const { limit, cursor } = request.query;
      const page = deps.store.listCalls(toCallFilter(request.query), limit, cursor ?? null);
      return { items: page.items.map(summaryFromStored), nextCursor: page.nextCursor };
    },
  );

  api.get(
    '/api/v1/calls/:id',
    {
      schema: {
        tags: ['calls'],
        summary: 'One call in full: payloads, environment, delegated calls, helpers',
        params: callIdParamsSchema,
        response: { 200: callDetailSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const call = deps.store.getCall(request.params.id);
      if (call === null) throw apiErrors.callNotFound(request.params.id);
      const cacheEntries = deps.cache && call.containerId ? deps.cache.entriesForContainer(call.containerId) : [];
      return presentCallDetail(call, deps.store.childrenOf(call.id), cacheEntries);
    },
  );
}

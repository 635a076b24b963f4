/**
 * GET /api/v1/calls (pages of summaries, newest first) and
 * GET /api/v1/calls/:id (one call in full).
 */

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { plainJsonSerializer } from '../present/fast-json.js';
import type { ReadOps } from '../read-ops.js';
import { sendBytes } from './send-bytes.js';
import { callDetailSchema } from '../schemas/call-detail.js';
import { callPageSchema } from '../schemas/call-list.js';
import { callListQuerySchema } from '../schemas/call-query.js';
import { errorResponses } from '../schemas/error.js';

export const callIdParamsSchema = z.object({
  id: z.string().min(1).max(128).describe('The call id, as lists and the tail give it'),
});

export function registerCalls(app: FastifyInstance, reads: Pick<ReadOps, 'callPage' | 'callDetail'>): void {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get(
    '/api/v1/calls',
    {
      schema: {
        tags: ['calls'],
        operationId: 'listCalls',
        summary: 'List recorded calls, newest first',
        description:
          'Every filter narrows the list; VERSION probes are hidden unless includeVersion=true or command=VERSION, and successful STATUS heartbeats unless command=STATUS ' +
          '(most are not stored at all: GET /api/v1/node/cni/status has them as readiness per network). ' +
          'Follow nextCursor for older pages: calls recorded meanwhile never shift a page.',
        querystring: callListQuerySchema,
        response: { 200: callPageSchema, ...errorResponses(400, 401) },
      },
      // The page arrives as JSON bytes (read-ops.ts); errors only go through a serializer.
      serializerCompiler: plainJsonSerializer,
    },
    async (request, reply) => sendBytes(reply, reads.callPage(request.query)),
  );

  api.get(
    '/api/v1/calls/:id',
    {
      schema: {
        tags: ['calls'],
        operationId: 'getCall',
        summary: 'One call in full: payloads, environment, delegated calls, helpers',
        params: callIdParamsSchema,
        response: { 200: callDetailSchema, ...errorResponses(400, 401, 404) },
      },
    },
    // Encoded through its response schema where it is read (read-ops.ts).
    async (request, reply) => sendBytes(reply, reads.callDetail(request.params.id)),
  );
}

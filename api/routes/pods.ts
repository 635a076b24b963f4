/** GET /api/v1/pods/:namespace/:name: the pod's story, every CNI call made for it as trees. */

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { plainJsonSerializer } from '../present/fast-json.js';
import type { ReadOps } from '../read-ops.js';
import { sendBytes } from './send-bytes.js';
import { errorResponses } from '../schemas/error.js';
import { podStorySchema } from '../schemas/pod-story.js';
import { refineTimeWindow, timeParam } from '../schemas/time-param.js';

const MAX_NAME_LENGTH = 253;

const podParamsSchema = z.object({
  namespace: z.string().min(1).max(MAX_NAME_LENGTH).describe('K8S_POD_NAMESPACE'),
  name: z.string().min(1).max(MAX_NAME_LENGTH).describe('K8S_POD_NAME'),
});

const podQuerySchema = z
  .strictObject({
    podUid: z.string().min(1).max(MAX_NAME_LENGTH).optional().describe('Only the calls of this pod UID, when the name was used by more than one pod'),
    since: timeParam('Only calls started at or after (with everything they delegated)').optional(),
    until: timeParam('Only calls started before (exclusive)').optional(),
  })
  .superRefine(refineTimeWindow);

export function registerPods(app: FastifyInstance, reads: Pick<ReadOps, 'podStory'>): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/api/v1/pods/:namespace/:name',
    {
      schema: {
        tags: ['pods'],
        operationId: 'getPodStory',
        summary: "A pod's story: its CNI calls oldest first, as trees, grouped by sandbox with libcni's cache entries, with time per command",
        params: podParamsSchema,
        querystring: podQuerySchema,
        response: { 200: podStorySchema, ...errorResponses(400, 401, 404) },
      },
      // Errors only: a story is sent as bytes, never through a serializer.
      serializerCompiler: plainJsonSerializer,
    },
    async (request, reply) => {
      const { namespace, name } = request.params;
      const { podUid, since, until } = request.query;
      // Hundreds of trees, as bytes encoded where they are read (read-ops.ts, present/fast-json.ts).
      return sendBytes(reply, reads.podStory({ namespace, name, podUid, sinceUs: since, untilUs: until }));
    },
  );
}

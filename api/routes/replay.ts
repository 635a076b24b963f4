/** GET /api/v1/calls/:id/replay: a shell script that re-runs the call by hand (see present/replay-script.ts). */

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ReadOps } from '../read-ops.js';
import { sendBytes } from './send-bytes.js';
import { errorResponses } from '../schemas/error.js';
import { callIdParamsSchema } from './calls.js';

export const REPLAY_CONTENT_TYPE = 'text/x-shellscript; charset=utf-8';

export function registerReplay(app: FastifyInstance, reads: Pick<ReadOps, 'replayScript'>): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/api/v1/calls/:id/replay',
    {
      schema: {
        tags: ['calls'],
        operationId: 'getCallReplayScript',
        summary: 'A shell script that re-runs the call by hand (it changes this node’s network)',
        description:
          'The same plugin binary, exactly the recorded CNI_* variables plus PATH (env -i), and exactly the recorded stdin bytes (base64 in the script).',
        params: callIdParamsSchema,
        response: {
          200: { description: 'A POSIX sh script', content: { 'text/x-shellscript': { schema: z.string() } } },
          ...errorResponses(400, 401, 404),
        },
      },
    },
    // A string with a non-JSON content type is sent as is, not through the JSON serializer.
    async (request, reply) => sendBytes(reply, reads.replayScript(request.params.id), REPLAY_CONTENT_TYPE),
  );
}

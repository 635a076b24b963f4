/** GET /api/v1/node/cni/status: CNI STATUS readiness per network (the heartbeats, as a timeline). */

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { ReadinessRouteDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import { errorResponses } from '../schemas/error.js';
import { readinessListSchema } from '../schemas/readiness.js';
import { presentReadiness } from '../present/readiness.js';

export function registerCniStatus(app: FastifyInstance, deps: ReadinessRouteDeps): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/api/v1/node/cni/status',
    {
      schema: {
        operationId: 'getCniStatus',
        tags: ['node'],
        summary: 'CNI STATUS readiness per network: ready or not and since when, the failing plugin’s error, checks, latency and the transitions',
        response: { 200: readinessListSchema, ...errorResponses(401, 501) },
      },
    },
    async () => {
      if (!deps.readiness) throw new ApiError(501, 'not_implemented', 'This daemon does not follow CNI STATUS.');
      return { items: deps.readiness.networks().map(presentReadiness) };
    },
  );
}

/**
 * GET /api/v1/node/runtime: what the node's container runtime says over the
 * CRI (its conditions as a timeline, whether it answers); GET
 * /api/v1/node/cni/gc-plan: what a GC would free, from its sandbox list. Both
 * only read: freeing is `cnirec gc --apply`, on the node, as root. Over an
 * opened bundle both answer as recorded when it was taken (the `recorded`
 * field), the plan only when the daemon answered then.
 */

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { RuntimeDeps, RuntimeRouteDeps } from '../deps.js';
import { ApiError, apiErrors } from '../errors.js';
import { errorResponses } from '../schemas/error.js';
import { gcPlanSchema, runtimeStatusSchema } from '../schemas/runtime.js';
import { presentGcPlan, presentRuntime } from '../present/runtime.js';

export function registerNodeRuntime(app: FastifyInstance, deps: RuntimeRouteDeps): void {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const runtime = (): RuntimeDeps => {
    if (!deps.runtime) throw new ApiError(501, 'not_implemented', 'This daemon does not ask the container runtime.');
    return deps.runtime;
  };
  api.get(
    '/api/v1/node/runtime',
    {
      schema: {
        operationId: 'getNodeRuntime',
        tags: ['node'],
        summary: 'The container runtime’s side (CRI): whether it answers, its conditions (RuntimeReady, NetworkReady) since when, and their transitions',
        description:
          'On a bundle opened with `cnirec open`: as recorded on that node when the bundle was taken (`recorded` says from what), the conditions and transitions from its record; never about the machine serving it.',
        response: { 200: runtimeStatusSchema, ...errorResponses(401, 501) },
      },
    },
    async () => presentRuntime(runtime().view()),
  );
  api.get(
    '/api/v1/node/cni/gc-plan',
    {
      schema: {
        operationId: 'getGcPlan',
        tags: ['node'],
        summary: 'What a CNI GC would free now: the attachments whose sandbox the runtime no longer lists (checked twice). Lists only: `cnirec gc --apply` frees',
        description:
          'On a bundle opened with `cnirec open`: the plan as the daemon judged it when the bundle was taken (`recorded` says so), or 501 when the daemon did not answer then.',
        response: { 200: gcPlanSchema, ...errorResponses(401, 501) },
      },
    },
    async () => {
      const plan = runtime().gcPlan();
      if (plan === null) {
        const source = deps.source?.();
        throw apiErrors.noGcPlanInBundle(source?.node ?? 'unknown', source?.bundle?.takenAt ?? 'an unknown time');
      }
      return presentGcPlan(plan);
    },
  );
}

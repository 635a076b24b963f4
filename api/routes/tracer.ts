/** GET /api/v1/tracer (status) and PUT /api/v1/tracer/mode (switch full ↔ light without losing calls in flight). */

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { TracerDeps } from '../deps.js';
import { apiErrors } from '../errors.js';
import { errorResponses } from '../schemas/error.js';
import { captureModeBodySchema, tracerStatusSchema, type TracerStatusBody } from '../schemas/tracer.js';

export function registerTracer(app: FastifyInstance, deps: TracerDeps): void {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const status = (): TracerStatusBody => ({ ...deps.tracerStatus(), modeSwitchable: deps.setCaptureMode !== undefined });

  api.get(
    '/api/v1/tracer',
    {
      schema: {
        tags: ['tracer'],
        operationId: 'getTracerStatus',
        summary: 'What the tracer is doing: running, ready, capture mode, restarts, lost events',
        response: { 200: tracerStatusSchema, ...errorResponses(401) },
      },
    },
    async () => status(),
  );

  api.put(
    '/api/v1/tracer/mode',
    {
      schema: {
        tags: ['tracer'],
        operationId: 'setCaptureMode',
        summary: 'Switch the capture mode; answers once the new tracer records',
        body: captureModeBodySchema,
        response: { 200: tracerStatusSchema, ...errorResponses(400, 401, 500, 501) },
      },
    },
    async (request) => {
      const setCaptureMode = deps.setCaptureMode;
      if (setCaptureMode === undefined) throw apiErrors.modeSwitchUnsupported();
      try {
        await setCaptureMode(request.body.mode);
      } catch (err) {
        throw apiErrors.modeSwitchFailed(err);
      }
      return status();
    },
  );
}

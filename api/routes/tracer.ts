/** GET /api/v1/tracer (status) and PUT /api/v1/tracer/mode (switch full ↔ light without losing calls in flight). */

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { TracerDeps } from '../deps.js';
import { ApiError, apiErrors } from '../errors.js';
import type { CaptureRequest } from '../../collector/index.js';
import { errorResponses } from '../schemas/error.js';
import { captureModeBodySchema, tracerStatusSchema, type CaptureModeBody, type TracerStatusBody } from '../schemas/tracer.js';

export function registerTracer(app: FastifyInstance, deps: TracerDeps): void {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const status = (): TracerStatusBody => ({
    ...deps.tracerStatus(),
    modeSwitchable: deps.setCaptureMode !== undefined || deps.capture !== undefined,
    capture: deps.capture?.status() ?? null,
  });

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
        summary: 'Set the capture mode (auto, full, light), for a while or until changed, for a pod or namespace or the node; answers once the tracer runs the mode it implies',
        body: captureModeBodySchema,
        response: { 200: tracerStatusSchema, ...errorResponses(400, 401, 500, 501) },
      },
    },
    async (request) => {
      const body = request.body;
      try {
        if (deps.capture !== undefined) {
          await deps.capture.request(captureRequest(body));
          return status();
        }
        if (deps.source?.().bundle) throw apiErrors.nothingRecords();
        const setCaptureMode = deps.setCaptureMode;
        if (setCaptureMode === undefined || body.mode === 'auto' || body.forSeconds !== undefined || body.namespace !== undefined || body.pod !== undefined) {
          throw apiErrors.modeSwitchUnsupported();
        }
        await setCaptureMode(body.mode);
      } catch (err) {
        if (err instanceof ApiError) throw err;
        throw apiErrors.modeSwitchFailed(err);
      }
      return status();
    },
  );
}

function captureRequest(body: CaptureModeBody): CaptureRequest {
  const [podNamespace, podName] = body.pod?.split('/') ?? [];
  const scope = podNamespace !== undefined && podName !== undefined ? { namespace: podNamespace, pod: podName } : body.namespace !== undefined ? { namespace: body.namespace, pod: null } : null;
  return { setting: body.mode, forMs: body.forSeconds === undefined ? null : body.forSeconds * 1000, scope };
}

/**
 * The OpenAPI document (GET /api/v1/openapi.json), generated from the same
 * zod schemas that validate requests, and a browsable page of it
 * (/api/v1/docs). registerOpenApi must run before any route is added: the
 * swagger plugin learns routes as they are registered.
 */

import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { createJsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { pruneUnusedComponents } from '../present/openapi-prune.js';

export const OPENAPI_PATH = '/api/v1/openapi.json';
export const DOCS_PREFIX = '/api/v1/docs';

export async function registerOpenApi(app: FastifyInstance, opts: { readonly authRequired: boolean }): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'cnirec',
        version: '1',
        description:
          'Every CNI plugin call on this node: what the runtime asked, what the plugin answered, what it ran. ' +
          'Contract v1: fields may be added, never renamed.',
      },
      tags: [
        { name: 'calls', description: 'Recorded plugin calls' },
        { name: 'pods', description: 'Calls per pod' },
        { name: 'tracer', description: 'The bpftrace tracer' },
      ],
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'Required on every route but /healthz when the daemon has a token' } },
      },
      ...(opts.authRequired ? { security: [{ bearer: [] }] } : {}),
    },
    transform: createJsonSchemaTransform({ skipList: [] }),
    transformObject: (documentObject) => pruneUnusedComponents(jsonSchemaTransformObject(documentObject)),
  });
}

export async function registerDocs(app: FastifyInstance): Promise<void> {
  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger());
  await app.register(swaggerUi, { routePrefix: DOCS_PREFIX });
}

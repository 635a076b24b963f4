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
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
        description:
          'Every CNI plugin call on this node: what the runtime asked, what the plugin answered, what it ran. ' +
          'Contract v1: fields may be added, never renamed.',
      },
      // Relative: the daemon that served this document, whatever address it was reached at.
      servers: [{ url: '/', description: 'The cnirec daemon that served this document' }],
      tags: [
        { name: 'calls', description: 'Recorded plugin calls' },
        { name: 'pods', description: 'Calls per pod' },
        { name: 'cache', description: "libcni's result cache and host-local's IP reservations" },
        { name: 'findings', description: 'Known CNI failure modes found on this node' },
        { name: 'tail', description: 'Calls and cache changes as they happen' },
        { name: 'tracer', description: 'The bpftrace tracer' },
        { name: 'health', description: 'Whether the daemon records' },
        { name: 'metrics', description: 'Prometheus' },
      ],
      // With a token every operation but /healthz (security: [] on its route) needs it; without one, none does.
      ...(opts.authRequired
        ? {
            components: {
              securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'The daemon\'s --token (or --token-file): "Authorization: Bearer <token>"' } },
            },
            security: [{ bearer: [] }],
          }
        : { security: [] }),
    },
    transform: createJsonSchemaTransform({ skipList: [] }),
    transformObject: (documentObject) => pruneUnusedComponents(jsonSchemaTransformObject(documentObject)),
  });
}

export async function registerDocs(app: FastifyInstance): Promise<void> {
  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger());
  await app.register(swaggerUi, { routePrefix: DOCS_PREFIX });
}

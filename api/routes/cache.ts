/**
 * GET /api/v1/cache (libcni's cached entries), GET /api/v1/ips/:ip (who held
 * an address, and when) and GET /api/v1/findings (broken cache files, stale
 * entries, leaked IPs, ADDs without a cache file, DEL and ADD loops).
 */

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { ReadOps } from '../read-ops.js';
import { sendBytes } from './send-bytes.js';
import { cacheListSchema, cacheQuerySchema, findingListSchema, findingsQuerySchema, ipHistorySchema, ipParamsSchema } from '../schemas/cache.js';
import { errorResponses } from '../schemas/error.js';

// Bodies arrive as JSON bytes, encoded through these same response schemas where they are read (read-ops.ts).
export function registerCache(app: FastifyInstance, reads: Pick<ReadOps, 'cacheEntries' | 'ipHistory' | 'findings'>): void {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get(
    '/api/v1/cache',
    {
      schema: {
        tags: ['cache'],
        summary: "libcni's cached results: what the node believes is attached, newest first",
        querystring: cacheQuerySchema,
        response: { 200: cacheListSchema, ...errorResponses(400, 401, 501) },
      },
    },
    async (request, reply) => sendBytes(reply, reads.cacheEntries(request.query)),
  );

  api.get(
    '/api/v1/ips/:ip',
    {
      schema: {
        tags: ['cache'],
        summary: 'Who held an IP address and when: host-local reservations and cached results, oldest first',
        params: ipParamsSchema,
        response: { 200: ipHistorySchema, ...errorResponses(400, 401, 501) },
      },
    },
    async (request, reply) => sendBytes(reply, reads.ipHistory(request.params.ip)),
  );

  api.get(
    '/api/v1/findings',
    {
      schema: {
        tags: ['cache'],
        summary: 'Known CNI failure modes found on this node, most recently seen first',
        querystring: findingsQuerySchema,
        response: { 200: findingListSchema, ...errorResponses(400, 401, 501) },
      },
    },
    async (request, reply) => sendBytes(reply, reads.findings(request.query)),
  );
}

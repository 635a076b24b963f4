/**
 * GET /api/v1/cache (libcni's cached entries), GET /api/v1/ips/:ip (who held
 * an address, and when) and GET /api/v1/findings (broken cache files, stale
 * entries, leaked IPs, ADDs without a cache file, DEL and ADD loops).
 */

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { ReadOps } from '../read-ops.js';
import { sendBytes } from './send-bytes.js';
import { cacheListSchema, cacheQuerySchema, ipHistorySchema, ipParamsSchema } from '../schemas/cache.js';
import { findingPageSchema, findingsQuerySchema } from '../schemas/findings.js';
import { errorResponses } from '../schemas/error.js';

// Bodies arrive as JSON bytes, encoded through these same response schemas where they are read (read-ops.ts).
export function registerCache(app: FastifyInstance, reads: Pick<ReadOps, 'cacheEntries' | 'ipHistory' | 'findings'>): void {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get(
    '/api/v1/cache',
    {
      schema: {
        tags: ['cache'],
        operationId: 'listCacheEntries',
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
        operationId: 'getIpHistory',
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
        tags: ['findings'],
        operationId: 'listFindings',
        summary: 'Known CNI failure modes found on this node, worst first',
        description:
          'One item per kind and subject: DEL and ADD loops (critical), broken cache files, stale cache entries and leaked IPs (warning), ' +
          'ADDs that left no cache file (info). Ordered by severity, then most recently seen; open ones only unless includeResolved=true. ' +
          'A finding is resolved when its condition ends (a loop when the command succeeds or the failures stop, an ADD without cache ' +
          'when its attachment is deleted). total and byKind count every page; follow nextCursor for the next.',
        querystring: findingsQuerySchema,
        response: { 200: findingPageSchema, ...errorResponses(400, 401, 501) },
      },
    },
    async (request, reply) => sendBytes(reply, reads.findings(request.query)),
  );
}

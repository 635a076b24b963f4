/**
 * GET /api/v1/cache (libcni's cached entries), GET /api/v1/ips/:ip (who held
 * an address, and when) and GET /api/v1/findings (broken cache files, stale
 * entries, leaked IPs, ADDs without a cache file, DEL and ADD loops).
 */

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { CacheReader, FindingsReader } from '../../store/cache-reader.js';
import { ApiError } from '../errors.js';
import {
  cacheListSchema,
  cacheQuerySchema,
  findingListSchema,
  findingsQuerySchema,
  ipHistorySchema,
  ipParamsSchema,
  presentCacheEntry,
  presentFinding,
  presentIpHolding,
} from '../schemas/cache.js';
import { errorResponses } from '../schemas/error.js';

export interface CacheRouteDeps {
  /** Null when the daemon runs without the cache watcher. */
  readonly cache?: CacheReader | null;
  /** The findings log, read whether or not caches are watched (the call loops need none); absent: the cache reader's. */
  readonly findings?: FindingsReader | null;
}

export function registerCache(app: FastifyInstance, deps: CacheRouteDeps): void {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const reader = (): CacheReader => {
    if (!deps.cache) throw new ApiError(501, 'not_implemented', 'This daemon does not watch CNI cache directories; start it with cache directories configured (see --cni-cache-dirs).');
    return deps.cache;
  };

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
    async (request) => {
      const q = request.query;
      const [podNamespace, podName] = q.pod === undefined ? [undefined, undefined] : (q.pod.split('/') as [string, string]);
      const items = reader().listCacheEntries({
        ...(q.containerId !== undefined ? { containerId: q.containerId } : {}),
        ...(q.network !== undefined ? { network: q.network } : {}),
        ...(podNamespace !== undefined ? { podNamespace, podName } : {}),
        includeRemoved: q.includeRemoved ?? false,
        limit: q.limit,
      });
      return { items: items.map(presentCacheEntry) };
    },
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
    async (request) => ({ ip: request.params.ip, history: reader().ipHistory(request.params.ip).map(presentIpHolding) }),
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
    async (request) => {
      const q = request.query;
      return { items: (deps.findings ?? reader()).listFindings({ includeResolved: q.includeResolved ?? false, limit: q.limit, ...(q.kind ? { kind: q.kind } : {}) }).map(presentFinding) };
    },
  );
}

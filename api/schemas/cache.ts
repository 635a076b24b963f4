/**
 * Schemas of the cache routes: libcni's cached entries and IP history, as JSON (times ISO 8601, like the call routes).
 */

import { z } from 'zod';
import { booleanParam, nameParam, podParam } from './params.js';
import { component } from './registry.js';

const MAX_PAGE = 1000;


export const cacheQuerySchema = z.strictObject({
  containerId: nameParam('The container (CNI_CONTAINERID) the entry is for').optional(),
  network: nameParam('The network (conf/conflist "name")').optional(),
  pod: podParam('The pod, as namespace/name (from the K8S_POD_* args libcni cached)').optional(),
  includeRemoved: booleanParam('Also versions that were rewritten or deleted (default: only what is on disk now)').optional(),
  limit: z.coerce.number().int().min(1).max(MAX_PAGE).default(100).describe(`Rows, 1 to ${MAX_PAGE}`),
});

export const ipParamsSchema = z.object({
  ip: z.union([z.ipv4(), z.ipv6()]).describe('An IPv4 or IPv6 address, without prefix length'),
});

/** What a cache file attaches, as every view of it (REST and the live tail) shows it (api/present/cache.ts: presentCacheFile). */
export const cacheAttachmentFields = {
  containerId: z.string().nullable(),
  networkName: z.string().nullable(),
  ifName: z.string().nullable(),
  netns: z.string().nullable(),
  pod: z.object({ namespace: z.string().nullable(), name: z.string(), uid: z.string().nullable() }).nullable(),
  ips: z.array(z.string()),
};

export const cacheEntrySchema = component(
  'CacheEntry',
  z.object({
    id: z.number().int(),
    path: z.string(),
    format: z.enum(['cniCacheV1', 'legacy']).describe('legacy: an old file holding only the result'),
    ...cacheAttachmentFields,
    cniArgs: z.array(z.tuple([z.string(), z.string()])),
    capabilityArgs: z.unknown(),
    config: z.unknown().describe('The conf/conflist libcni ran, decoded from the file'),
    configProblem: z.string().nullable(),
    result: z.unknown().describe('The final result of the chain, as libcni cached it'),
    fileMtime: z.string(),
    firstSeen: z.string(),
    lastSeen: z.string(),
    supersededAt: z.string().nullable().describe('A newer version of the file replaced this one'),
    removedAt: z.string().nullable().describe('The file was deleted (libcni does on DEL)'),
    addCallId: z.string().nullable().describe('The ADD call that wrote it, when recorded'),
    delCallId: z.string().nullable().describe('The DEL call that removed it, when recorded'),
    redacted: z.boolean().describe('Secret values in config, result or capabilityArgs were replaced by "[redacted]" before storing'),
    redactedPointers: z.array(z.string()).describe('JSON pointers into this entry (/config/…, /result/…, /capabilityArgs/…) of the values replaced'),
  }),
);

export const cacheListSchema = z.object({ items: z.array(cacheEntrySchema) });

export const ipHoldingSchema = component(
  'IpHolding',
  z.object({
    network: z.string().nullable(),
    containerId: z.string().nullable(),
    ifName: z.string().nullable(),
    pod: z.object({ namespace: z.string().nullable(), name: z.string() }).nullable(),
    source: z.enum(['host-local', 'cache']).describe('host-local: a reservation file; cache: an address in a cached result'),
    path: z.string(),
    from: z.string(),
    to: z.string().nullable().describe('Null while held'),
  }),
);

export const ipHistorySchema = z.object({ ip: z.string(), history: z.array(ipHoldingSchema).describe('Oldest first') });

export type CacheEntry = z.infer<typeof cacheEntrySchema>;
export type CacheList = z.infer<typeof cacheListSchema>;
export type IpHolding = z.infer<typeof ipHoldingSchema>;
export type IpHistory = z.infer<typeof ipHistorySchema>;

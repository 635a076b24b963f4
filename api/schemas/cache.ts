/**
 * Schemas of the cache routes: libcni's cached entries and IP history, as JSON (times ISO 8601, like the call routes).
 */

import { z } from 'zod';
import type { CacheEntryFields, StoredCacheEntry, StoredIpHolding } from '../../store/index.js';
import { isoFromMs } from './iso-time.js';
import { component } from './registry.js';

const MAX_NAME_LENGTH = 253;
const MAX_PAGE = 1000;

const booleanParam = (what: string) =>
  z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .describe(what);

const iso = isoFromMs;
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

export const cacheQuerySchema = z.strictObject({
  containerId: z.string().min(1).max(MAX_NAME_LENGTH).optional().describe('The container (CNI_CONTAINERID) the entry is for'),
  network: z.string().min(1).max(MAX_NAME_LENGTH).optional().describe('The network (conf/conflist "name")'),
  pod: z
    .string()
    .max(2 * MAX_NAME_LENGTH + 1)
    .regex(/^[^/]+\/[^/]+$/, 'Must be namespace/name')
    .optional()
    .describe('The pod, as namespace/name (from the K8S_POD_* args libcni cached)'),
  includeRemoved: booleanParam('Also versions that were rewritten or deleted (default: only what is on disk now)').optional(),
  limit: z.coerce.number().int().min(1).max(MAX_PAGE).default(100).describe(`Rows, 1 to ${MAX_PAGE}`),
});

export const ipParamsSchema = z.object({
  ip: z.union([z.ipv4(), z.ipv6()]).describe('An IPv4 or IPv6 address, without prefix length'),
});

export const cacheEntrySchema = component(
  'CacheEntry',
  z.object({
    id: z.number().int(),
    path: z.string(),
    format: z.enum(['cniCacheV1', 'legacy']).describe('legacy: an old file holding only the result'),
    containerId: z.string().nullable(),
    networkName: z.string().nullable(),
    ifName: z.string().nullable(),
    netns: z.string().nullable(),
    pod: z.object({ namespace: z.string().nullable(), name: z.string(), uid: z.string().nullable() }).nullable(),
    ips: z.array(z.string()),
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

type CacheFileFields = 'path' | 'format' | 'containerId' | 'networkName' | 'ifName' | 'netns' | 'podNamespace' | 'podName' | 'podUid' | 'ips';

/** What every view of a cache entry (REST and the live tail) shows of the file: where it is and what it attaches. */
export function presentCacheFile(f: Pick<CacheEntryFields, CacheFileFields>) {
  return {
    path: f.path,
    format: f.format,
    containerId: f.containerId,
    networkName: f.networkName,
    ifName: f.ifName,
    netns: f.netns,
    pod: f.podName === null ? null : { namespace: f.podNamespace, name: f.podName, uid: f.podUid },
    ips: [...f.ips],
  };
}

export function presentCacheEntry(e: StoredCacheEntry): z.input<typeof cacheEntrySchema> {
  return {
    id: e.id,
    ...presentCacheFile(e),
    cniArgs: e.cniArgs.map(([k, v]) => [k, v] as [string, string]),
    capabilityArgs: e.capabilityArgs,
    config: e.config,
    configProblem: e.configProblem,
    result: e.result,
    fileMtime: iso(e.fileMtimeMs),
    firstSeen: iso(e.firstSeenMs),
    lastSeen: iso(e.lastSeenMs),
    supersededAt: isoOrNull(e.supersededAtMs),
    removedAt: isoOrNull(e.removedAtMs),
    addCallId: e.addCallId,
    delCallId: e.delCallId,
    redacted: e.redactions.length > 0,
    redactedPointers: [...e.redactions],
  };
}

export function presentIpHolding(h: StoredIpHolding): z.input<typeof ipHoldingSchema> {
  return {
    network: h.network,
    containerId: h.containerId,
    ifName: h.ifName,
    pod: h.podName === null ? null : { namespace: h.podNamespace, name: h.podName },
    source: h.source,
    path: h.path,
    from: iso(h.fromMs),
    to: isoOrNull(h.toMs),
  };
}

export type CacheEntry = z.infer<typeof cacheEntrySchema>;
export type CacheList = z.infer<typeof cacheListSchema>;
export type IpHolding = z.infer<typeof ipHoldingSchema>;
export type IpHistory = z.infer<typeof ipHistorySchema>;

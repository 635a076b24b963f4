/**
 * What each read route computes from the database, down to the bytes it
 * sends: the query, the mapping to the contract's shapes and the JSON
 * encoding. Synchronous and free of HTTP, so a route is a thin shell around
 * one op and the API benchmark can time an op on its own. Errors are thrown
 * as the API's typed errors (or the store's).
 */

import { z } from 'zod';
import { kindsOfSeverity, type CacheReader, type CallFilter, type FindingsReader, type CallStore, type PodCallScope } from '../store/index.js';
import { ApiError, apiErrors } from './errors.js';
import { presentCallDetail } from './present/call-detail.js';
import { encodePodStory } from './present/fast-json.js';
import { buildPodStory } from './present/pod-story.js';
import { replayScript } from './present/replay-script.js';
import { presentFindingPage } from './present/finding.js';
import { presentCacheEntry, presentIpHolding } from './present/cache.js';
import { toCallFilter } from './present/call-filter.js';
import { cacheListSchema, ipHistorySchema, type cacheQuerySchema } from './schemas/cache.js';
import { findingPageSchema, type FindingsQuery } from './schemas/findings.js';
import { callDetailSchema } from './schemas/call-detail.js';
import type { CallListQuery } from './schemas/call-query.js';
import { presentStoredSummaries } from './present/call-error.js';
import type { RuntimeDeps } from './deps.js';

/** The store's read side, as the read routes use it. */
export interface ReadSources {
  readonly store: Pick<CallStore, 'listCalls' | 'getCall' | 'childrenOf' | 'podCallGraph' | 'failureTexts' | 'resolveContainerId'>;
  /** Null when the daemon does not watch CNI cache directories. */
  readonly cache: CacheReader | null;
  /** The findings log (call loops need no cache); null: the cache reader's. */
  readonly findings: FindingsReader | null;
  /** What the runtime says of each sandbox; null when the daemon does not ask the runtime. */
  readonly runtime?: Pick<RuntimeDeps, 'sandboxes'> | null;
}

export type CacheQuery = z.output<typeof cacheQuerySchema>;

export interface PodStoryRequest {
  readonly namespace: string;
  readonly name: string;
  readonly podUid?: string | undefined;
  readonly sinceUs?: number | undefined;
  readonly untilUs?: number | undefined;
}

/** Every read: JSON bodies as bytes, the replay script as text. */
export interface ReadOps {
  callPage(query: CallListQuery): Buffer;
  callDetail(id: string): Buffer;
  replayScript(id: string): string;
  podStory(request: PodStoryRequest): Buffer;
  cacheEntries(query: CacheQuery): Buffer;
  ipHistory(ip: string): Buffer;
  findings(query: FindingsQuery): Buffer;
}


/** The content type of every JSON body the read routes send as bytes. */
export const JSON_TYPE = 'application/json; charset=utf-8';

const json = (body: unknown): Buffer => Buffer.from(JSON.stringify(body), 'utf8');

export function createReadOps({ store, cache, findings, runtime = null }: ReadSources): ReadOps {
  const cacheReader = (): CacheReader => {
    if (!cache) throw new ApiError(501, 'not_implemented', 'This daemon does not watch CNI cache directories; start it with cache directories configured (see --cni-cache-dirs).');
    return cache;
  };
  const findingsReader = (): FindingsReader => findings ?? cacheReader();

  // A container id as people copy it from `cnirec` (its first 12 characters) names the one container it starts.
  const withContainerPrefix = (filter: CallFilter): CallFilter => {
    if (filter.containerId === undefined) return filter;
    const match = store.resolveContainerId(filter.containerId);
    if (match.kind === 'ambiguous') {
      const shown = `${match.candidates.slice(0, 3).join(', ')}${match.candidates.length > 3 ? ', …' : ''}`;
      throw apiErrors.badRequest(`Invalid query: containerId "${filter.containerId}" starts several containers (${shown}): give more of it`, [
        { path: 'containerId', message: 'Ambiguous prefix' },
      ]);
    }
    return match.kind === 'prefix' ? { ...filter, containerId: match.containerId } : filter;
  };

  return {
    callPage(query) {
      const page = store.listCalls(withContainerPrefix(toCallFilter(query)), query.limit, query.cursor ?? null);
      // Up to 1,000 summaries: plain JSON.stringify, not zod's encode (see present/fast-json.ts).
      return json({ items: presentStoredSummaries(page.items, store), nextCursor: page.nextCursor });
    },

    callDetail(id) {
      const call = store.getCall(id);
      if (call === null) throw apiErrors.callNotFound(id);
      const cacheEntries = cache && call.containerId ? cache.entriesForContainer(call.containerId) : [];
      // Small bodies go through their response schema, as fastify-type-provider-zod's serializer would.
      return json(z.encode(callDetailSchema, presentCallDetail(call, presentStoredSummaries(store.childrenOf(call.id), store), cacheEntries)));
    },

    replayScript(id) {
      const call = store.getCall(id);
      if (call === null) throw apiErrors.callNotFound(id);
      return replayScript(call);
    },

    podStory({ namespace, name, podUid, sinceUs, untilUs }) {
      const scope: PodCallScope = { podUid, sinceUs, untilUs };
      const story = buildPodStory(store, namespace, name, scope, { cache, findings: findings ?? cache, runtime });
      if (story === null) throw apiErrors.podNotFound(namespace, name, podUid !== undefined || sinceUs !== undefined || untilUs !== undefined);
      // Hundreds of trees: each encoded once, as bytes (see present/fast-json.ts).
      return encodePodStory(story);
    },

    cacheEntries(q) {
      const [podNamespace, podName] = q.pod === undefined ? [undefined, undefined] : (q.pod.split('/') as [string, string]);
      const items = cacheReader().listCacheEntries({
        ...(q.containerId !== undefined ? { containerId: q.containerId } : {}),
        ...(q.network !== undefined ? { network: q.network } : {}),
        ...(podNamespace !== undefined ? { podNamespace, podName } : {}),
        includeRemoved: q.includeRemoved ?? false,
        limit: q.limit,
      });
      return json(z.encode(cacheListSchema, { items: items.map(presentCacheEntry) }));
    },

    ipHistory(ip) {
      return json(z.encode(ipHistorySchema, { ip, history: cacheReader().ipHistory(ip).map(presentIpHolding) }));
    },

    findings(q) {
      const [podNamespace, podName] = q.pod === undefined ? [] : (q.pod.split('/') as [string, string]);
      // A severity narrows to its kinds, and together with kind= to the kinds both name.
      const severityKinds = q.severity === undefined ? undefined : kindsOfSeverity(q.severity);
      const kinds = severityKinds === undefined ? q.kind : q.kind === undefined ? severityKinds : q.kind.filter((k) => severityKinds.includes(k));
      if (kinds !== undefined && kinds.length === 0) return json({ items: [], total: 0, byKind: [], nextCursor: null });
      const page = findingsReader().findingGroups({
        ...(kinds !== undefined ? { kinds } : {}),
        ...(podName !== undefined ? { pod: { namespace: podNamespace!, name: podName } } : {}),
        ...(q.containerId !== undefined ? { containerId: q.containerId } : {}),
        includeResolved: q.includeResolved ?? false,
        limit: q.limit,
        cursor: q.cursor ?? null,
      });
      return json(z.encode(findingPageSchema, presentFindingPage(page)));
    },
  };
}

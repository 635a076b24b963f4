/**
 * A stored call (with payloads) and its delegated calls → the CallDetail
 * body. The summary part goes through summaryFromStored, so a call reads
 * the same here as in lists and the live tail.
 */

import type { KernelChange } from '../../collector/index.js';
import { isoFromUs } from '../../lib/index.js';
import type { StoredCacheEntry, StoredCall, StoredCallSummary } from '../../store/index.js';
import type { KernelChangeView } from '../schemas/kernel.js';
import type { CallDetail } from '../schemas/call-detail.js';
import type { CallSummary } from '../schemas/call-summary.js';
import { presentCacheEntry } from './cache.js';
import { failureFromStreams } from './call-error.js';
import { cacheEntryForCall, networkOfConfig } from './call-cache.js';
import { summaryFromStored } from './call-summary.js';
import { presentHelper } from './helper.js';
import { jsonOrNull, presentPayload } from './payload.js';

/** A full call reduced to the summary the mapper expects: sizes instead of bytes. */
export function summaryOfStoredCall(call: StoredCall): StoredCallSummary {
  const size = (s: StoredCall['stdin']) => ({ storedBytes: s.bytes.length, totalBytes: s.totalBytes, truncated: s.truncated });
  return { ...call, stdin: size(call.stdin), stdout: size(call.stdout), stderr: size(call.stderr) };
}

/**
 * `children`: its delegated calls as summaries (api/present/call-error.ts presentStoredSummaries);
 * `cacheEntries`: every stored version for the call's container (empty when caches are not watched).
 */
export function presentCallDetail(call: StoredCall, children: readonly CallSummary[], cacheEntries: readonly StoredCacheEntry[] = []): CallDetail {
  const stdin = presentPayload(call.stdin);
  const stdout = presentPayload(call.stdout);
  const config = jsonOrNull(stdin.text);
  const cache = cacheEntryForCall(call, networkOfConfig(config), cacheEntries);
  const cacheView = cache === null ? null : presentCacheEntry(cache);
  const result = jsonOrNull(stdout.text);
  // Without payloads (light capture, or auto before a trigger) the linked cache entry still knows the config the
  // call was given and, for the ADD libcni cached, the result the runtime got: shown, and said to come from there.
  const fromCache = call.captureMode === 'light' && cache !== null && (cache.addCallId === call.id || cache.delCallId === call.id);
  const cachedConfig = fromCache && config === null ? (cacheView?.config ?? null) : null;
  const cachedResult = fromCache && result === null && cache.addCallId === call.id ? (cacheView?.result ?? null) : null;
  return {
    ...summaryFromStored(summaryOfStoredCall(call), failureFromStreams(call.stdout.bytes, call.stderr.bytes)),
    argv: [...call.argv],
    // Rows stored before exec chains were kept say '[]': they ran their one image.
    execChain: call.execChain.length > 0 ? [...call.execChain] : [call.path],
    env: { ...call.env },
    cniArgs: call.cniArgs,
    stdin,
    stdout,
    stderr: presentPayload(call.stderr),
    config: config ?? cachedConfig,
    configSource: config !== null ? 'pipe' : cachedConfig !== null ? 'cache' : null,
    result: result ?? cachedResult,
    resultSource: result !== null ? 'pipe' : cachedResult !== null ? 'cache' : null,
    children: [...children],
    helpers: call.helpers.map(presentHelper),
    changes: call.changes === null ? null : call.changes.map(presentChange),
    cache: cacheView,
  };
}

function presentChange(c: KernelChange): KernelChangeView {
  return { at: isoFromUs(c.atUs), pid: c.pid, netns: c.netns, object: c.object, action: c.action, subject: c.subject, ok: c.ok, error: c.error, attributes: { ...c.attributes } };
}

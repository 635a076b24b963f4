/** The query of GET /api/v1/calls → the store's CallFilter (milliseconds → microseconds, "true" → true). */

import type { CallFilter } from '../../store/index.js';
import type { CallListQuery } from '../schemas/call-query.js';

export function toCallFilter(q: CallListQuery): CallFilter {
  return {
    namespace: q.namespace,
    pod: q.pod,
    podUid: q.podUid,
    containerId: q.containerId,
    command: q.command,
    plugin: q.plugin,
    network: q.network,
    failed: q.failed,
    // The store keeps whole microseconds; a fractional ms bound rounds to the nearest.
    minDurationUs: q.minDurationMs === undefined ? undefined : Math.round(q.minDurationMs * 1000),
    sinceUs: q.since,
    untilUs: q.until,
    includeVersion: q.includeVersion,
    status: q.status,
  };
}

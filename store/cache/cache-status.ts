/**
 * The cache side's state for /healthz and /metrics: the cache watcher's own
 * (its scan time named for what it is to an operator, the last full rescan)
 * plus the store's findings and the writes waiting for it.
 */

import type { CacheWatcherStatus } from '../../collector/index.js';
import type { CacheFindingKind } from '../findings/index.js';

export interface CacheStatus extends Omit<CacheWatcherStatus, 'lastScanAt'> {
  readonly openFindings: Partial<Record<CacheFindingKind, number>>;
  /** When the last full rescan finished (ISO 8601); null before the first. */
  readonly lastRescanAt: string | null;
  readonly pendingWrites: number;
  readonly droppedWrites: number;
}

/**
 * Puts the tracer's gaps on record beside the calls: `gap-started` when
 * bpftrace went away, `restarted` (with the gap's start, length and reason)
 * when a new one records. Through the store wiring, so a gap during a disk
 * outage is written once the disk is back.
 */

import type { TracerEventListener } from '../collector/index.js';
import { isoFromUs } from '../lib/index.js';
import type { StoreWiring } from './store-wiring.js';

export function recordGaps(writes: Pick<StoreWiring, 'recordTracerEvent'>): TracerEventListener {
  return {
    onTracerEvent(event) {
      const { gap } = event;
      if (gap.endedAtUs === null) {
        writes.recordTracerEvent('gap-started', { reason: gap.reason, incompleteCalls: gap.incompleteCalls }, gap.startedAtUs);
      } else {
        writes.recordTracerEvent(
          'restarted',
          {
            gapStartedAt: isoFromUs(gap.startedAtUs),
            gapSeconds: (gap.endedAtUs - gap.startedAtUs) / 1e6,
            reason: gap.reason,
            incompleteCalls: gap.incompleteCalls,
          },
          gap.endedAtUs,
        );
      }
    },
  };
}

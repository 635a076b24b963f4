/** Stored helper processes → the API's helper objects: in full for a call's page, as sizes for the pod's story. */

import { isoFromUs } from '../../lib/index.js';
import type { StoredHelper, StoredHelperSummary } from '../../store/index.js';
import type { Helper, HelperSummary } from '../schemas/helper.js';
import { presentPayload } from './payload.js';
import { durationMs } from './time.js';

function helperFields(h: StoredHelper | StoredHelperSummary) {
  return {
    seq: h.seq,
    pid: h.pid,
    ppid: h.ppid,
    path: h.path,
    argv: [...h.argv],
    startedAt: isoFromUs(h.startedAtUs),
    endedAt: h.endedAtUs === null ? null : isoFromUs(h.endedAtUs),
    durationMs: durationMs(h.startedAtUs, h.endedAtUs),
    exitCode: h.exitCode,
    signal: h.signal,
    coreDumped: h.coreDumped,
  };
}

export function presentHelper(h: StoredHelper): Helper {
  return Object.assign(helperFields(h), { stdout: presentPayload(h.stdout), stderr: presentPayload(h.stderr) });
}

export function presentHelperSummary(h: StoredHelperSummary): HelperSummary {
  const size = (s: StoredHelperSummary['stdout']) => ({ bytes: s.storedBytes, totalBytes: s.totalBytes, truncated: s.truncated });
  // Object.assign, not a spread: see store/calls/compile-columns.ts.
  return Object.assign(helperFields(h), { payload: { stdout: size(h.stdout), stderr: size(h.stderr) } });
}

/**
 * What a call marked lostRecords may lack, said for its cause: the words the
 * CLI and the MCP server give a reader (the web view has its own, shorter).
 */

import type { LostRecordsCause } from '../../collector/index.js';

const BY_CAUSE: Readonly<Record<LostRecordsCause, string>> = {
  'tracer-lost': 'the tracer dropped records while this call ran (perf buffers full: raise --perf-buffer-pages, or give the daemon more CPU)',
  'payload-tracer-cut': 'the tracer taking its bytes stopped while it ran (a capture mode switch or a tracer restart)',
  'payloads-never-came': 'reads or writes its processes made never reached the daemon',
  'early-overflow': 'more of its records came ahead of its exec than the daemon keeps',
  'out-of-order': "its plugin's exec reached the daemon after its own (a CPU buffer read late): its place in the tree was guessed",
};

/** One line: why the record cannot vouch for the call, and what may be missing. */
export function lostRecordsText(cause: LostRecordsCause | null): string {
  const why = cause === null ? 'the tracer lost records while this call ran' : BY_CAUSE[cause];
  return `${why}: payloads, helpers or delegated calls may be incomplete`;
}

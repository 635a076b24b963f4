/**
 * What a call's record may lack or mix up, said under its header on
 * `cnirec show`: one line per caveat that applies, none when the record is
 * whole. Recorded text (the images of an exec chain) is neutralised as each
 * line is made. Pure, for tests.
 */

import { lostRecordsText, type CallDetail } from '../api/index.js';
import { bold, yellow } from './output.js';
import { safe } from './terminal-text.js';

const STREAMS = ['stdin', 'stdout', 'stderr'] as const;

type CaveatFields = Pick<
  CallDetail,
  'captureMode' | 'lostRecords' | 'lostRecordsCause' | 'execChain' | 'stdioShared' | 'uncapturedIo' | 'envTruncated' | 'pathTruncated' | 'outputAfterExit' | 'configSource' | 'resultSource' | (typeof STREAMS)[number]
>;

/** One line per caveat of the record, in the order a reader needs them; empty when there is none. */
export function recordCaveats(call: CaveatFields): string[] {
  const lines: string[] = [];
  if (call.captureMode === 'light') {
    const cached = call.configSource === 'cache' || call.resultSource === 'cache' ? "; its config and result from libcni's cache: -o json" : '';
    lines.push(`light capture: stdin, stdout and stderr were not recorded (payloads were off for this call)${cached}`);
  }
  if (call.lostRecords) lines.push(lostRecordsText(call.lostRecordsCause));
  if (call.uncapturedIo > 0) {
    const missing = STREAMS.filter((s) => call[s].truncated).map((s) => `${s} ${count(call[s].totalBytes - call[s].bytes)} of ${count(call[s].totalBytes)} bytes`);
    lines.push(
      `not captured: ${count(call.uncapturedIo)} ${call.uncapturedIo === 1 ? 'read or write' : 'reads and writes'} moved bytes the tracer does not take (sendfile, splice, copy_file_range, sendmsg, iovecs past the 2nd…)` +
        (missing.length > 0 ? `; missing: ${missing.join(', ')}` : ''),
    );
  }
  if (call.stdioShared) lines.push('stdout and stderr were one file (a terminal, 2>&1) and some writes went through an fd that stood for neither: those are filed as stdout, and may be stderr');
  const after = (['stdout', 'stderr'] as const).filter((s) => call.outputAfterExit[s] !== null).map((s) => `${s} from byte ${call.outputAfterExit[s]}`);
  if (after.length > 0) lines.push(`output after exit: descendants wrote ${after.join(' and ')} after the plugin exited (the caller still got it; marked in the stream)`);
  if (call.execChain.length > 1) lines.push(`exec'd in place: ${call.execChain.map(safe).join(' → ')}`);
  if (call.envTruncated) lines.push('environment cut by the tracer: CNI_* values past the cut (command, container, pod) may be missing');
  if (call.pathTruncated) lines.push('path cut by the tracer: the plugin path shown is its beginning');
  return lines;
}

/** The "Record caveats:" block: its title and one indented line each; no lines when the record is whole. */
export function recordCaveatsBlock(call: CaveatFields): string[] {
  const lines = recordCaveats(call);
  return lines.length === 0 ? [] : [bold('Record caveats:'), ...lines.map((l) => `  ${yellow('!')} ${l}`)];
}

const count = (n: number): string => n.toLocaleString('en-US');

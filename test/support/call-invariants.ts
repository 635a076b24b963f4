/**
 * What every call the assembler publishes must satisfy, whatever the tracer
 * fed it: the type's invariants the store and the API rely on. Answers the
 * broken rules as sentences (empty when the call is well-formed).
 */

import path from 'node:path';
import type { CapturedStream, CniCall, ProcessOutcome } from '../../collector/types.js';

const ID = /^[0-9a-z]{11,}-[0-9a-z]+$/;
const KEPT_ENV = /^(CNI_.*|TRACEPARENT|TRACESTATE)$/;

export function callProblems(call: CniCall, maxStreamBytes: number): string[] {
  const problems: string[] = [];
  const check = (ok: boolean, what: string) => {
    if (!ok) problems.push(`${call.id}: ${what}`);
  };
  check(ID.test(call.id), `id ${JSON.stringify(call.id)} is not <µs base36>-<pid base36>`);
  check(Number.isSafeInteger(call.pid) && call.pid > 0, `pid ${call.pid}`);
  check(Number.isFinite(call.startedAtUs), `startedAtUs ${call.startedAtUs}`);
  check(call.plugin === path.posix.basename(call.path), `plugin ${call.plugin} is not the basename of ${call.path}`);
  for (const name of Object.keys(call.env)) check(KEPT_ENV.test(name), `env holds ${name}`);
  check(call.command === (call.env.CNI_COMMAND ?? null), 'command is not CNI_COMMAND');
  check(call.isVersionProbe === (call.command === 'VERSION'), 'isVersionProbe disagrees with command');
  switch (call.status) {
    case 'running':
      check(call.endedAtUs === null && call.outcome === null && call.incompleteReason === null, 'running but ended');
      break;
    case 'finished':
      check(call.endedAtUs !== null && call.outcome !== null && call.incompleteReason === null, 'finished without an end and outcome');
      break;
    case 'incomplete':
      check(typeof call.incompleteReason === 'string' && call.incompleteReason.length > 0, 'incomplete without a reason');
      break;
    default:
      check(false, `status ${String(call.status)}`);
  }
  check((call.endedAtUs === null) === (call.durationUs === null), 'durationUs and endedAtUs disagree');
  if (call.durationUs !== null) check(Number.isFinite(call.durationUs) && call.durationUs >= 0, `durationUs ${call.durationUs}`);
  if (call.outcome !== null) problems.push(...outcomeProblems(call.outcome).map((p) => `${call.id}: ${p}`));
  for (const [name, s] of [['stdin', call.stdin], ['stdout', call.stdout], ['stderr', call.stderr]] as const) {
    problems.push(...streamProblems(s, maxStreamBytes).map((p) => `${call.id}: ${name} ${p}`));
  }
  if (call.captureMode === 'light') check(call.stdin.bytes.length + call.stdout.bytes.length + call.stderr.bytes.length === 0, 'light capture with payloads');
  for (const h of call.helpers) {
    check(Number.isFinite(h.startedAtUs) && (h.endedAtUs === null || Number.isFinite(h.endedAtUs)), `helper ${h.pid} times`);
    if (h.outcome !== null) problems.push(...outcomeProblems(h.outcome).map((p) => `${call.id}: helper ${h.pid} ${p}`));
    problems.push(...streamProblems(h.stdout, maxStreamBytes).map((p) => `${call.id}: helper stdout ${p}`));
    problems.push(...streamProblems(h.stderr, maxStreamBytes).map((p) => `${call.id}: helper stderr ${p}`));
  }
  return problems;
}

function outcomeProblems(o: ProcessOutcome): string[] {
  if (o.signal === null) {
    return o.exitCode !== null && Number.isInteger(o.exitCode) && o.exitCode >= 0 && o.exitCode <= 255 && !o.coreDumped ? [] : [`outcome ${JSON.stringify(o)}`];
  }
  return o.exitCode === null && Number.isInteger(o.signal) && o.signal >= 1 && o.signal <= 127 ? [] : [`outcome ${JSON.stringify(o)}`];
}

function streamProblems(s: CapturedStream, max: number): string[] {
  const out: string[] = [];
  if (!Buffer.isBuffer(s.bytes)) out.push('bytes is not a Buffer');
  if (s.bytes.length > max) out.push(`keeps ${s.bytes.length} bytes, over the ${max} cap`);
  if (!Number.isFinite(s.totalBytes) || s.totalBytes < 0) out.push(`totalBytes ${s.totalBytes}`);
  if (s.bytes.length > s.totalBytes) out.push(`keeps ${s.bytes.length} bytes of ${s.totalBytes} moved`);
  // Bytes kept but fewer than the syscalls moved: must say so.
  if (s.totalBytes !== s.bytes.length && !s.truncated && s.totalBytes > s.bytes.length) out.push(`holds ${s.bytes.length} of ${s.totalBytes} bytes without truncated`);
  return out;
}

/**
 * `cnirec capture`: what the tracer captures now and why, and changing it —
 * `full --for 30m --pod ns/name` while chasing one pod's failure, `auto` to go
 * back to the policy, `light` to stop paying for payloads.
 */

import type { CaptureModeBody, TracerStatus } from '../api/index.js';
import { scopeText } from '../collector/index.js';
import { parseDuration } from '../daemon/index.js';
import { getJson, putJson, type ClientOptions } from './api-client.js';
import { UsageError } from './errors.js';
import { OUTPUT_FLAGS, outputMode, parseCommand, podFlag } from './flags.js';
import { bold, dim, green, stdout, yellow } from './output.js';
import { safe } from './terminal-text.js';
import { ageText } from './time-text.js';

export const CAPTURE_USAGE = 'usage: cnirec capture [auto|full|light] [--for DURATION] [--pod NS/NAME | --namespace NS] [-o json]';

type CaptureStatus = NonNullable<TracerStatus['capture']>;

export async function captureCommand(args: string[], client: ClientOptions): Promise<number> {
  const { values, positionals } = parseCommand(args, { ...OUTPUT_FLAGS, for: { type: 'string' }, pod: { type: 'string' }, namespace: { type: 'string' } }, CAPTURE_USAGE, true);
  const mode = outputMode(values, CAPTURE_USAGE);
  const body = requestBody(positionals, values);
  const status: TracerStatus = body === null ? await getJson(client, '/api/v1/tracer') : await putJson(client, '/api/v1/tracer/mode', body);
  if (mode === 'json') {
    stdout.raw(`${JSON.stringify(status.capture ?? { mode: status.mode }, null, 2)}\n`);
    return 0;
  }
  stdout.lines(status.capture ? formatCapture(status.capture) : [`capture: ${status.mode} (this daemon has no capture policy)`]);
  return 0;
}

/** The PUT body the flags ask for, or null to only show the state. Pure, for tests. */
export function requestBody(positionals: readonly string[], values: { for?: string | undefined; pod?: string | undefined; namespace?: string | undefined }): CaptureModeBody | null {
  if (positionals.length > 1) throw new UsageError(`one setting, not ${positionals.length}`, CAPTURE_USAGE);
  const setting = positionals[0];
  if (setting === undefined) {
    if (values.for !== undefined || values.pod !== undefined || values.namespace !== undefined) throw new UsageError('--for, --pod and --namespace go with a setting: cnirec capture full --for 30m', CAPTURE_USAGE);
    return null;
  }
  if (setting !== 'auto' && setting !== 'full' && setting !== 'light') throw new UsageError(`"${setting}" is not a setting: auto, full or light`, CAPTURE_USAGE);
  if (values.pod !== undefined && values.namespace !== undefined) throw new UsageError('--pod or --namespace, not both', CAPTURE_USAGE);
  if ((values.pod !== undefined || values.namespace !== undefined) && setting !== 'full') throw new UsageError('--pod and --namespace narrow `full` only', CAPTURE_USAGE);
  const body: { -readonly [K in keyof CaptureModeBody]: CaptureModeBody[K] } = { mode: setting };
  if (values.for !== undefined) {
    const parsed = parseDuration(values.for);
    if (!parsed.ok || parsed.value === 0) throw new UsageError(`--for: ${parsed.ok ? 'give a length, e.g. 30m' : parsed.message}`, CAPTURE_USAGE);
    body.forSeconds = Math.max(1, Math.round(parsed.value / 1000));
  }
  if (values.pod !== undefined) {
    const pod = podFlag(values.pod, '--pod', CAPTURE_USAGE);
    if (pod.namespace === undefined) throw new UsageError('--pod takes NAMESPACE/NAME', CAPTURE_USAGE);
    body.pod = `${pod.namespace}/${pod.name}`;
  }
  if (values.namespace !== undefined) body.namespace = values.namespace;
  return body;
}

/** Pure, for tests. */
export function formatCapture(c: CaptureStatus, nowMs = Date.now()): string[] {
  const tracer = c.mode === 'full' ? yellow('full (payloads captured)') : green('light (no payloads)');
  const setting = c.setting === c.configured ? c.setting : `${c.setting} (configured: ${c.configured})`;
  const lines = [`${bold('capture')} ${setting}`, `  tracer   ${tracer}${c.switching ? dim(' — switching') : ''}`, `  why      ${safe(c.reason)}`];
  if (c.until !== null) lines.push(`  until    ${c.until} ${dim(`(in ${ageText(Math.max(0, Date.parse(c.until) - nowMs))})`)}`);
  if (c.scope !== null) lines.push(`  only     ${safe(scopeText(c.scope))} ${dim('(other calls are recorded without payloads)')}`);
  if (c.lastError !== null) lines.push(`  ${yellow('failing')}  ${safe(c.lastError)}`);
  return lines;
}

/**
 * The shell script behind GET /api/v1/calls/:id/replay: re-runs a recorded
 * call by hand with the same binary, exactly the recorded CNI_* variables
 * (plus a PATH, for the plugin's own helpers) and exactly the recorded stdin
 * bytes. Pure: the route fetches the call, this only writes text.
 *
 * stdin travels as base64 in a quoted here-document, so NUL bytes, quotes,
 * `$` and newlines reach the plugin untouched; it sits in a function of its
 * own so the here-document never shares a command line with env values that
 * span lines themselves.
 */

import { REDACTION_MARKER } from '../../collector/index.js';
import type { StoredCall } from '../../store/index.js';
import { commentSafe, shQuote } from './shell-quote.js';
import { isoFromUs } from '../../lib/index.js';

export type ReplaySource = Pick<
  StoredCall,
  | 'id'
  | 'command'
  | 'plugin'
  | 'path'
  | 'argv'
  | 'env'
  | 'stdin'
  | 'podNamespace'
  | 'podName'
  | 'podUid'
  | 'containerId'
  | 'netns'
  | 'ifname'
  | 'parentId'
  | 'startedAtUs'
  | 'durationUs'
  | 'exitCode'
  | 'signal'
  | 'status'
  | 'incompleteReason'
  | 'captureMode'
>;

/** The usual system PATH: plugins run iptables, ip, tc… and find them through it. */
export const REPLAY_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Base64 wrapped like `base64` itself does; `base64 -d` ignores the newlines. */
const BASE64_LINE = 76;
/** Not in the base64 alphabet (it has an underscore), so no data line can end the here-document early. */
const HEREDOC_END = 'CNIREC_STDIN';

export function replayScript(call: ReplaySource): string {
  const warnings: string[] = [];
  const env = replayEnv(call.env, warnings);
  const args = call.argv.slice(1).map((a) => withoutNul(a, 'an argument', warnings));
  if (call.stdin.redactions !== undefined) {
    warnings.push(
      `stdin was redacted before it was stored: the secret values at ${call.stdin.redactions.join(', ')} are "[redacted]" here, so the plugin gets a different config than it did and this replay is not faithful; put the real values in by hand.`,
    );
  }
  if (call.env.CNI_ARGS?.includes(`=${REDACTION_MARKER}`)) {
    warnings.push(`CNI_ARGS was redacted before it was stored: a secret value there is "${REDACTION_MARKER}" here; put the real value in by hand.`);
  }
  if (call.argv.some((a) => a.includes(REDACTION_MARKER))) {
    warnings.push(`an argument was redacted before it was stored ("${REDACTION_MARKER}" here); put the real value in by hand.`);
  }
  if (call.stdin.truncated) warnings.push(`stdin was truncated: ${call.stdin.bytes.length} of ${call.stdin.totalBytes} bytes were recorded, and only those are sent.`);
  if (call.captureMode === 'light') warnings.push('the call was recorded in light mode, without payloads: the plugin gets an empty stdin; put the network configuration in by hand.');
  if (call.argv.length > 0 && call.argv[0] !== call.path) warnings.push(`the plugin's argv[0] was ${JSON.stringify(call.argv[0])}; this script runs it with the path as argv[0].`);

  const lines = [
    '#!/bin/sh',
    `# cnirec replay of CNI call ${commentSafe(call.id)}`,
    '#',
    ...describeCall(call).map(([label, value]) => `#   ${label.padEnd(10)} ${commentSafe(value)}`),
    '#',
    "# WARNING: running this script changes this node's network. It runs the real",
    '# plugin with the recorded command: an ADD creates interfaces and allocates',
    '# addresses, a DEL tears them down, whatever exists now. Run it as root, only',
    '# on purpose, after reading it; the network namespace it names must exist.',
    '#',
    '# The plugin gets exactly the recorded CNI_* variables plus PATH (env -i),',
    `# and exactly the ${call.stdin.bytes.length} recorded stdin bytes (base64 below, decoded on the way in).`,
    ...warnings.map((w) => `# NOTE: ${commentSafe(w)}`),
    '',
    'cnirec_stdin() {',
    `  base64 -d <<'${HEREDOC_END}'`,
    ...wrapBase64(call.stdin.bytes.toString('base64')),
    HEREDOC_END,
    '}',
    '',
    'cnirec_stdin | env -i \\',
    ...[`PATH=${REPLAY_PATH}`, ...env].map((assignment) => `  ${shQuote(assignment)} \\`),
    `  ${[call.path, ...args].map(shQuote).join(' ')}`,
    '',
  ];
  return lines.join('\n');
}

/** `NAME=value` for each recorded CNI_* variable, in recorded order. Trace context is left out: a replay is not the original trace. */
function replayEnv(env: Readonly<Record<string, string>>, warnings: string[]): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith('CNI_') || name.includes('=') || name.includes('\0')) continue;
    out.push(`${name}=${withoutNul(value, name, warnings)}`);
  }
  return out;
}

function withoutNul(value: string, what: string, warnings: string[]): string {
  if (!value.includes('\0')) return value;
  warnings.push(`${what} held NUL bytes, which no environment or argument can carry; they are left out.`);
  return value.replaceAll('\0', '');
}

function describeCall(call: ReplaySource): Array<[string, string]> {
  const pod = call.podNamespace !== null && call.podName !== null ? `${call.podNamespace}/${call.podName}${call.podUid ? ` (uid ${call.podUid})` : ''}` : '(none)';
  const rows: Array<[string, string]> = [
    ['command', call.command ?? '(none: CNI_COMMAND was not set)'],
    ['plugin', `${call.plugin} (${call.path})`],
    ['pod', pod],
    ['container', call.containerId ?? '(none)'],
    ['netns', `${call.netns ?? '(none)'}, ifname ${call.ifname ?? '(none)'}`],
    ['started', isoFromUs(call.startedAtUs)],
    ['outcome', outcomeText(call)],
  ];
  if (call.parentId !== null) rows.push(['delegated', `by call ${call.parentId} (normally the parent plugin runs this one)`]);
  return rows;
}

function outcomeText(call: ReplaySource): string {
  const took = call.durationUs === null ? '' : ` after ${(call.durationUs / 1000).toFixed(3)} ms`;
  if (call.status === 'running') return 'still running when this script was made';
  if (call.signal !== null) return `killed by signal ${call.signal}${took}`;
  if (call.exitCode !== null) return `exit code ${call.exitCode}${took}`;
  return `unknown (${call.incompleteReason ?? 'its end was not seen'})`;
}

function wrapBase64(b64: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < b64.length; i += BASE64_LINE) out.push(b64.slice(i, i + BASE64_LINE));
  return out;
}

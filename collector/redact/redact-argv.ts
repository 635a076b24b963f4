/**
 * Secrets on a command line (and in CNI_ARGS, see redactCniArgs). Plugins are exec'd with their path alone, but
 * the helpers they run are not: `curl -H 'Authorization: Bearer …'`,
 * `--password=…`, `etcdctl --password …`, a URL with `user:pass@`. Each
 * argument is looked at on its own and next to the flag before it, with
 * the same key rules as JSON payloads (so `--redact-keys` covers argv too):
 *
 * - `--token=x`, `-password=x`, `password=x` (a bare `name=value` too);
 * - `--token x`, `-password x`: a flag naming a secret hides the next argument;
 * - `Authorization: Bearer x`, `Cookie: …`: a header whose name is a secret key;
 * - `scheme://user:pass@host…`: the password of a URL's user info.
 *
 * Only long flag names can match (the patterns need a word such as
 * `token`), so `iptables -p tcp` or `ip -k` stay as they are. Pure: the
 * same argv in, the same argv out, or null when nothing was hidden.
 */

import { REDACTION_MARKER } from './redaction-rules.js';

/** `--name=value`, `-name=value` or `name=value`; the name must look like an option, not a path or a value. */
const ASSIGNMENT = /^(-{0,2}[A-Za-z][\w.-]*)=(.+)$/s;
/** `--name` or `-name` with nothing attached. */
const FLAG = /^-{1,2}([A-Za-z][\w.-]*)$/;
/** `Name: value`, as curl -H and wget --header take it. */
const HEADER = /^([A-Za-z][\w-]*)\s*:\s*(.+)$/s;
const DASH = 0x2d;
/** `scheme://user:password@`: the password is what sits between the colon and the at sign. */
const URL_USERINFO = /^([a-z][a-z0-9+.-]*:\/\/[^/:@\s]*:)([^/@\s]+)(@)/i;

export function redactArgv(argv: readonly string[], isSecretKey: (key: string) => boolean): string[] | null {
  let out: string[] | null = null;
  const set = (i: number, value: string) => {
    if (value === argv[i]) return;
    out ??= [...argv];
    out[i] = value;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    // Most arguments (`-t`, `nat`, `10.244.1.0/24`) can hold nothing: no regex for them.
    const flag = arg.charCodeAt(0) === DASH ? FLAG.exec(arg) : null;
    if (flag && i + 1 < argv.length && isSecretKey(flag[1]!)) {
      set(i + 1, REDACTION_MARKER);
      i++;
      continue;
    }
    if (arg.includes('=') || arg.includes(':')) set(i, redactOne(arg, isSecretKey));
  }
  return out;
}

function redactOne(arg: string, isSecretKey: (key: string) => boolean): string {
  const assignment = ASSIGNMENT.exec(arg);
  if (assignment === null) return redactValue(arg, isSecretKey);
  const name = assignment[1]!;
  const value = assignment[2]!;
  if (isSecretKey(name.replace(/^-+/, ''))) return `${name}=${REDACTION_MARKER}`;
  // `--header=Cookie: …`, `--url=https://user:pass@…`: the value may hold one itself.
  const inner = redactValue(value, isSecretKey);
  return inner === value ? arg : `${name}=${inner}`;
}

/** A header whose name is a secret key, or a URL with a password. */
function redactValue(text: string, isSecretKey: (key: string) => boolean): string {
  const header = HEADER.exec(text);
  if (header && !text.includes('://') && isSecretKey(header[1]!)) return `${header[1]}: ${REDACTION_MARKER}`;
  const url = URL_USERINFO.exec(text);
  if (url) return `${url[1]}${REDACTION_MARKER}${url[3]}${text.slice(url[0].length)}`;
  return text;
}

/**
 * CNI_ARGS (`K=V;K=V`, libcni's own format) with the value of every key
 * that names a secret replaced; null when none does. Runtimes put only pod
 * identity there, but a vendor plugin's args may carry a credential.
 */
export function redactCniArgs(text: string, isSecretKey: (key: string) => boolean): string | null {
  if (!text.includes('=')) return null;
  let changed = false;
  const parts = text.split(';').map((pair) => {
    const eq = pair.indexOf('=');
    if (eq <= 0 || !isSecretKey(pair.slice(0, eq))) return pair;
    changed = true;
    return `${pair.slice(0, eq)}=${REDACTION_MARKER}`;
  });
  return changed ? parts.join(';') : null;
}

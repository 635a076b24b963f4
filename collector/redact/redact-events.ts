/**
 * Applies the redaction rules to what the collector publishes, before any
 * subscriber (store, live tail) sees it: every stream and command line of a
 * call and of its helpers, and the config, result and capability args of
 * libcni's cache entries. What holds no secret passes as the same object.
 */

import type { CacheEntry } from '../cache/index.js';
import type { CapturedStream, CniCall, CollectorEvent, HelperProcess, KernelChange } from '../types.js';
import { helperChange } from '../changes/index.js';
import { redactArgv, redactCniArgs } from './redact-argv.js';
import { createBytesRedactor, looksLikeJson } from './redact-json-bytes.js';
import { createCacheFileRedactor } from './redact-cache-file.js';
import { createValueRedactor } from './redact-value.js';
import { keyClassifier, REDACTION_MARKER, type RedactionRules } from './redaction-rules.js';

export interface Redactor {
  stream(stream: CapturedStream): CapturedStream;
  call(call: CniCall): CniCall;
  callEvents(events: readonly CollectorEvent[]): CollectorEvent[];
  /** Applied by the cache watcher as soon as a file is decoded (see CacheWatcherOptions.redact). */
  cacheEntry(entry: CacheEntry): CacheEntry;
  /** A libcni cache file's bytes as they are on disk, for what leaves the node as a file (a bundle). */
  cacheFile(bytes: Buffer): Buffer;
  /**
   * A map of strings (a sandbox's labels and annotations, as the runtime gives them): a value under a secret
   * key is replaced, a JSON value has its secrets replaced; the same object when nothing was.
   */
  stringMap(map: Readonly<Record<string, string>>): Readonly<Record<string, string>>;
}

function redoneFromHelper(ch: KernelChange, helpers: readonly HelperProcess[]): KernelChange {
  const h = helpers.find((x) => x.pid === ch.pid);
  return (h && helperChange(h, ch.atUs, ch.netns)) ?? ch;
}

export function createRedactor(rules: RedactionRules): Redactor {
  const bytes = createBytesRedactor(rules);
  const value = createValueRedactor(rules);
  const isSecretKey = keyClassifier(rules);
  // The marker in place says what was hidden; argv carries no pointer list.
  const argv = (a: readonly string[]): readonly string[] => redactArgv(a, isSecretKey) ?? a;

  const stream = (s: CapturedStream): CapturedStream => {
    if (s.bytes.length === 0) return s;
    const r = bytes(s.bytes);
    // totalBytes stays what the process moved: the size of what it really sent.
    return r === null ? s : { bytes: r.bytes, totalBytes: s.totalBytes, truncated: s.truncated, redactions: r.pointers };
  };

  const helper = (h: HelperProcess): HelperProcess => {
    const stdout = stream(h.stdout);
    const stderr = stream(h.stderr);
    const args = argv(h.argv);
    return stdout === h.stdout && stderr === h.stderr && args === h.argv ? h : { ...h, argv: args, stdout, stderr };
  };

  const call = (c: CniCall): CniCall => {
    const stdin = stream(c.stdin);
    const stdout = stream(c.stdout);
    const stderr = stream(c.stderr);
    let helpers = c.helpers;
    for (let i = 0; i < helpers.length; i++) {
      const h = helper(helpers[i]!);
      if (h === helpers[i]) continue;
      if (helpers === c.helpers) helpers = [...c.helpers];
      (helpers as HelperProcess[])[i] = h;
    }
    const args = argv(c.argv);
    // CNI_ARGS is kept twice: as the call's cniArgs and in its env.
    const cniArgs = c.cniArgs ? redactCniArgs(c.cniArgs, isSecretKey) : null;
    const envArgs = c.env.CNI_ARGS === undefined ? null : redactCniArgs(c.env.CNI_ARGS, isSecretKey);
    if (stdin === c.stdin && stdout === c.stdout && stderr === c.stderr && helpers === c.helpers && args === c.argv && cniArgs === null && envArgs === null) return c;
    return {
      ...c,
      // An iptables change reads its helper's argv: said again from the redacted one.
      ...(c.changes && helpers !== c.helpers ? { changes: c.changes.map((ch) => (ch.object === 'iptables' ? redoneFromHelper(ch, helpers) : ch)) } : {}),
      argv: args,
      stdin,
      stdout,
      stderr,
      helpers,
      cniArgs: cniArgs ?? c.cniArgs,
      env: envArgs === null ? c.env : { ...c.env, CNI_ARGS: envArgs },
    };
  };

  const cacheEntry = (e: CacheEntry): CacheEntry => {
    const config = value(e.config, '/config');
    const result = value(e.result, '/result');
    const capabilityArgs = value(e.capabilityArgs, '/capabilityArgs');
    // The runtime's CNI_ARGS as libcni cached them: a secret one is hidden as in the call's own CNI_ARGS.
    const secretArgs = e.cniArgs.flatMap(([k], i) => (isSecretKey(k) ? [`/cniArgs/${i}/1`] : []));
    if (config === null && result === null && capabilityArgs === null && secretArgs.length === 0) return e;
    return {
      ...e,
      config: config?.value ?? e.config,
      result: result?.value ?? e.result,
      capabilityArgs: (capabilityArgs?.value as CacheEntry['capabilityArgs'] | undefined) ?? e.capabilityArgs,
      cniArgs: secretArgs.length === 0 ? e.cniArgs : e.cniArgs.map(([k, v]) => [k, isSecretKey(k) ? REDACTION_MARKER : v] as const),
      redactions: [...(config?.pointers ?? []), ...(result?.pointers ?? []), ...(capabilityArgs?.pointers ?? []), ...secretArgs],
    };
  };

  const stringMap = (map: Readonly<Record<string, string>>): Readonly<Record<string, string>> => {
    let out: Record<string, string> | null = null;
    for (const [k, v] of Object.entries(map)) {
      let redacted = v;
      if (isSecretKey(k)) redacted = REDACTION_MARKER;
      else {
        const b = Buffer.from(v, 'utf8');
        const r = looksLikeJson(b) ? bytes(b) : null;
        if (r !== null) redacted = r.bytes.toString('utf8');
      }
      if (redacted === v) continue;
      out ??= { ...map };
      out[k] = redacted;
    }
    return out ?? map;
  };

  return {
    stream,
    call,
    stringMap,
    callEvents: (events) =>
      events.map((ev) => {
        const c = call(ev.call);
        return c === ev.call ? ev : { ...ev, call: c };
      }),
    cacheEntry,
    cacheFile: createCacheFileRedactor(rules),
  };
}

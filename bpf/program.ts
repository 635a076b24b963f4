/**
 * Locates the bpftrace program and derives the text for a capture mode.
 * Light mode is the same program without the payload probes (the section
 * between the @full markers): no syscalls:* tracepoint at all, so the rest of
 * the node keeps its fast syscall path.
 */

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { IOV_LIMIT, NETLINK_CAP_BYTES, type CaptureMode, type PayloadPath } from './tracer-protocol.js';


/** bpf/cnirec.bt, found from this module whether it runs from source or from dist/. */
export function programPath(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    const candidate = path.join(dir, 'cnirec.bt');
    if (existsSync(candidate)) return candidate;
    const sibling = path.join(dir, 'bpf', 'cnirec.bt');
    if (existsSync(sibling)) return sibling;
    dir = path.dirname(dir);
  }
  throw new Error('bpf/cnirec.bt not found next to the cnirec installation; reinstall the package');
}

const SEED_MARKER = '/* @seed:';

/**
 * The program for a capture mode. `seedPids` are processes that count as
 * traced from the start: when a new run takes over from another, it must
 * treat the processes of the calls still in flight as already followed.
 * `payloadPath` picks full mode's payload probes (the section of the other
 * path is left out); the per-iovec probe is repeated IOV_LIMIT times.
 */
export function programText(
  mode: CaptureMode,
  seedPids: readonly number[] = [],
  source = readFileSync(programPath(), 'utf8'),
  payloadPath: PayloadPath = 'syscall-exit',
): string {
  let text = source;
  if (seedPids.length > 0) {
    const at = text.indexOf(SEED_MARKER);
    if (at < 0) throw new Error('bpf/cnirec.bt lacks its @seed marker');
    const seeds = seedPids.map((pid) => `@cni[${Math.trunc(pid)}] = 1;`).join(' ');
    text = `${text.slice(0, at)}${seeds}\n\t${text.slice(at)}`;
  }
  if (mode === 'full') {
    const payload = cut(text, payloadPath === 'syscall-exit' ? 'entry' : 'exit').replaceAll('NL_CAP', String(NETLINK_CAP_BYTES));
    const iovec = section(payload, 'iovec');
    if (!iovec) return payload;
    const repeated = Array.from({ length: IOV_LIMIT }, (_, i) => iovec.body.replaceAll('IOV_INDEX', String(i))).join('');
    return (payload.slice(0, iovec.begin) + repeated + payload.slice(iovec.end)).replaceAll('IOV_LIMIT', String(IOV_LIMIT));
  }
  return cut(text, 'full');
}

/** The text between `// @<name>-begin` and `// @<name>-end` (markers included), and where it is. */
function section(text: string, name: string): { begin: number; end: number; body: string } | null {
  const begin = text.indexOf(`// @${name}-begin`);
  const endMarker = `// @${name}-end`;
  const end = text.indexOf(endMarker);
  if (begin < 0 || end < begin) return null;
  return { begin, end: end + endMarker.length, body: text.slice(begin, end + endMarker.length) };
}

function cut(text: string, name: string): string {
  const s = section(text, name);
  if (!s) throw new Error(`bpf/cnirec.bt lacks its @${name}-begin/@${name}-end markers`);
  return text.slice(0, s.begin) + text.slice(s.end);
}

/** Environment bpftrace needs for this program: 200-byte strings/buffers (the chunk size). */
export function bpftraceEnv(perfBufferPages: number): Record<string, string> {
  return {
    BPFTRACE_STRLEN: '200',
    BPFTRACE_PERF_RB_PAGES: String(perfBufferPages),
    // The traced-pid map must hold every process of every concurrent call.
    BPFTRACE_MAP_KEYS_MAX: '65536',
  };
}

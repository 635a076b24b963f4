/**
 * Locates the bpftrace program and derives the text for a capture mode.
 * Light mode is the same program without the payload probes (the section
 * between the @full markers): no syscalls:* tracepoint at all, so the rest of
 * the node keeps its fast syscall path.
 */

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CaptureMode } from './tracer-protocol.js';

const FULL_BEGIN = '// @full-begin';
const FULL_END = '// @full-end';

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
 */
export function programText(mode: CaptureMode, seedPids: readonly number[] = [], source = readFileSync(programPath(), 'utf8')): string {
  let text = source;
  if (seedPids.length > 0) {
    const at = text.indexOf(SEED_MARKER);
    if (at < 0) throw new Error('bpf/cnirec.bt lacks its @seed marker');
    const seeds = seedPids.map((pid) => `@cni[${Math.trunc(pid)}] = 1;`).join(' ');
    text = `${text.slice(0, at)}${seeds}\n\t${text.slice(at)}`;
  }
  if (mode === 'full') return text;
  const begin = text.indexOf(FULL_BEGIN);
  const end = text.indexOf(FULL_END);
  if (begin < 0 || end < begin) throw new Error('bpf/cnirec.bt lacks its @full-begin/@full-end markers');
  return text.slice(0, begin) + text.slice(end + FULL_END.length);
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

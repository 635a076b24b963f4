/**
 * One look at one watched file: what it is now, as an Observation for
 * diffObservation, or null when there is nothing to say (unchanged since the
 * last look, a directory, host-local's bookkeeping). Reads through
 * readBounded, so links are not followed, FIFOs do not block and huge files
 * are not read; what cannot be used becomes a problem with a message for a
 * person.
 */

import type { Observation } from './cache-diff.js';
import { MAX_CACHE_FILE_BYTES, type CacheProblem } from './cache-types.js';
import { parseCacheFile } from './parse-cache-file.js';
import { isReservationFileName, parseReservation } from './parse-host-local.js';
import { lstatOrNull, readBounded, statKey } from './read-bounded.js';

/** host-local writes an id and an interface name: anything much bigger is not its file. */
const MAX_RESERVATION_BYTES = 4096;

/**
 * What the caller knows of the path: `known` is the stat key of the last look (undefined: never looked at).
 * `listed`: the path came from a directory listing as a non-directory, so a path never looked at is read right
 * away, the read's own fstat identifying it (at startup that saves an lstat per file).
 */
export interface Look {
  readonly dir: string;
  readonly path: string;
  readonly known: string | null | undefined;
  readonly listed: boolean;
}

const problem = (kind: CacheProblem['kind'], look: Look, message: string, key: string | null): Observation => ({
  kind: 'problem',
  key,
  problem: { kind, path: look.path, dir: look.dir, message },
});

/** The stat key when the file must be (re)read; 'skip' when unchanged or not ours; 'gone'. */
function changed(look: Look): string | null | 'skip' | 'gone' {
  if (look.listed && look.known === undefined) return null;
  const st = lstatOrNull(look.path);
  if (!st) return 'gone';
  if (st.isDirectory()) return 'skip'; // libcni and host-local never nest here; not ours to judge
  const key = statKey(st);
  return look.known === key ? 'skip' : key;
}

/** A libcni cache file. */
export function observeResult(look: Look): Observation | null {
  const { path, dir } = look;
  const key = changed(look);
  if (key === 'skip') return null;
  if (key === 'gone') return { kind: 'gone', path, dir };
  const r = readBounded(path, MAX_CACHE_FILE_BYTES);
  switch (r.kind) {
    case 'gone':
      return { kind: 'gone', path, dir };
    case 'not-a-regular-file':
      return problem('not-a-regular-file', look, `${path} in the CNI cache directory was not read: ${r.why}`, key);
    case 'unreadable':
      return problem('unreadable', look, `cannot read cache file ${path}: ${r.why}; cnirec needs read access to ${dir} (run as root)`, key);
    case 'too-large':
      return problem(
        'too-large',
        look,
        `cache file ${path} is ${r.size} bytes (limit ${MAX_CACHE_FILE_BYTES}); libcni writes a few KiB, so it is damaged or not a CNI cache file: it was not read`,
        r.key,
      );
    case 'bytes': {
      const parsed = parseCacheFile(r.bytes, path, dir, r.mtimeMs);
      return parsed.ok ? { kind: 'entry', key: r.key, entry: parsed.entry } : { kind: 'problem', key: r.key, problem: parsed.problem };
    }
  }
}

/** A host-local file `<dir>/<network>/<name>`: a reservation when the name is an IP. */
export function observeReservation(look: Look, network: string): Observation | null {
  const { path, dir } = look;
  const ip = path.slice(path.lastIndexOf('/') + 1);
  if (!isReservationFileName(ip)) return null; // lock, last_reserved_ip.<range>: host-local's bookkeeping
  const key = changed(look);
  if (key === 'skip') return null;
  if (key === 'gone') return { kind: 'gone', path, dir };
  const r = readBounded(path, MAX_RESERVATION_BYTES);
  switch (r.kind) {
    case 'gone':
      return { kind: 'gone', path, dir };
    case 'not-a-regular-file':
      return problem('not-a-regular-file', look, `${path} in the host-local data directory was not read: ${r.why}`, key);
    case 'unreadable':
      return problem('unreadable', look, `cannot read host-local reservation ${path}: ${r.why}`, key);
    case 'too-large':
      return problem('too-large', look, `host-local reservation ${path} is ${r.size} bytes; host-local writes an id and an interface name, so it was not read`, r.key);
    case 'bytes':
      return { kind: 'ip', key: r.key, allocation: parseReservation(r.bytes.toString('utf8'), { path, dir, network, ip, mtimeMs: r.mtimeMs }) };
  }
}

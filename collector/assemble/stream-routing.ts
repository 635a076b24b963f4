/**
 * Which stream of a call a read or write belongs to. Pure: the call's stdio
 * files at exec and the process's fds decide.
 */

import { roleOf, stdioShared, type CallState, type Proc } from './call-state.js';
import type { StreamCapture } from './stream-capture.js';

/** What routing needs of a read or write (the protocol's R, W and U records). */
export interface RoutedIo {
  readonly kind: 'read' | 'write';
  readonly fd: number;
  /** The open file it went to (see the protocol). */
  readonly file: string;
}

/**
 * Whose stream a read or write is: the open file decides, not the fd
 * number. Helpers and subshells share the plugin's files, a shell
 * redirects its own fds (`>&2`, `< file`), and a plugin may keep a dup of
 * stdout on fd 3 after pointing fd 1 at stderr; a helper's own
 * `>/dev/null` is another file than the plugin's /dev/null. When stdout
 * and stderr are one file, the fd used (2 or not) tells them apart.
 */
export function streamFor(call: CallState, proc: Proc, io: RoutedIo, isMain: boolean): StreamCapture | null {
  const files = call.stdioFiles;
  if (io.kind === 'read') {
    if (io.file === files[0] && io.file !== '0') return call.stdin;
  } else if (io.file !== '0') {
    if (io.file === files[1] && stdioShared(files)) {
      // One file for both: the fd tells, as the process's copies of fds made it stand for one or the other.
      const role = roleOf(proc, io.fd);
      if (role === 2) return call.stderr;
      if (role !== 1) call.stdioAmbiguous = true;
      return call.stdout;
    }
    if (io.file === files[1]) return call.stdout;
    if (io.file === files[2]) return call.stderr;
  }
  // The exec saw no file on that fd: the plugin's own fd is all there is to go by.
  if (isMain && io.fd <= 2 && files[io.fd] === '0' && (io.kind === 'read') === (io.fd === 0)) return [call.stdin, call.stdout, call.stderr][io.fd]!;
  // A helper's own stdin, kept when it is a change the helper makes (an nft script).
  if (proc.role === 'helper' && proc.helper?.stdin && io.kind === 'read') return proc.helper.stdin;
  if (proc.role === 'helper' && proc.helper && io.kind === 'write') {
    if (io.fd === 1) return proc.helper.stdout;
    if (io.fd === 2) return proc.helper.stderr;
  }
  return null;
}

/** The thin I/O the decoders' netns names need: a netns file's inode, as the kernel numbers it (ns.inum). */

import { statSync } from 'node:fs';

/** The inode of a netns path (`/var/run/netns/x`, `/proc/<pid>/ns/net`); null when it cannot be read. */
export function netnsInodeOf(path: string): string | null {
  try {
    return String(statSync(path).ino);
  } catch {
    return null;
  }
}

/** The node's own netns: the daemon's. */
export function hostNetnsInode(): string | null {
  return netnsInodeOf('/proc/self/ns/net');
}

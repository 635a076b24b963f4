/**
 * Decodes host-local's reservation files: `<dataDir>/<network>/<ip>` holding
 * `containerId\r\nifname` (older host-local: the container id alone). Other
 * files in a network directory (`last_reserved_ip.<range>`, `lock`) are
 * bookkeeping, not reservations. Pure.
 */

import { isIP } from 'node:net';
import type { IpAllocation } from './cache-types.js';

/** True when a file named `name` inside a network directory is an IP reservation. */
export function isReservationFileName(name: string): boolean {
  // host-local names IPv6 files with ':' kept; both families are valid file names as-is.
  return isIP(name) !== 0;
}

export function parseReservation(content: string, where: { path: string; dir: string; network: string; ip: string; mtimeMs?: number }): IpAllocation {
  // host-local writes "\r\n" between the fields; accept a bare "\n" too (hand edits, other tools).
  const [id = '', ifname = ''] = content.split(/\r?\n/, 2).map((s) => s.trim());
  return {
    path: where.path,
    dir: where.dir,
    network: where.network,
    ip: where.ip,
    containerId: id.length > 0 ? id : null,
    ifName: ifname.length > 0 ? ifname : null,
    mtimeMs: where.mtimeMs ?? 0,
  };
}

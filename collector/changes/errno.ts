/** Linux errno numbers (x86_64, asm-generic) to their names: what an ack's -errno means. */
const NAMES: Record<number, string> = {
  1: 'EPERM', 2: 'ENOENT', 3: 'ESRCH', 4: 'EINTR', 5: 'EIO', 6: 'ENXIO', 7: 'E2BIG', 9: 'EBADF', 11: 'EAGAIN', 12: 'ENOMEM',
  13: 'EACCES', 14: 'EFAULT', 16: 'EBUSY', 17: 'EEXIST', 19: 'ENODEV', 20: 'ENOTDIR', 22: 'EINVAL', 23: 'ENFILE', 24: 'EMFILE',
  28: 'ENOSPC', 34: 'ERANGE', 61: 'ENODATA', 71: 'EPROTO', 74: 'EBADMSG', 75: 'EOVERFLOW', 90: 'EMSGSIZE', 92: 'ENOPROTOOPT',
  93: 'EPROTONOSUPPORT', 95: 'EOPNOTSUPP', 97: 'EAFNOSUPPORT', 98: 'EADDRINUSE', 99: 'EADDRNOTAVAIL', 101: 'ENETUNREACH',
  105: 'ENOBUFS', 110: 'ETIMEDOUT', 113: 'EHOSTUNREACH', 524: 'ENOTSUPP',
};

export function errnoName(errno: number): string {
  return NAMES[errno] ?? `E${errno}`;
}

/** The strerror text Go and libc print for an errno (`invalid argument`): a plugin error that is only this says nothing more. */
const TEXTS: Record<string, string> = {
  EPERM: 'operation not permitted', ENOENT: 'no such file or directory', EEXIST: 'file exists', EINVAL: 'invalid argument',
  ENODEV: 'no such device', EBUSY: 'device or resource busy', ERANGE: 'numerical result out of range', EOPNOTSUPP: 'operation not supported',
  ENOSPC: 'no space left on device', EADDRNOTAVAIL: 'cannot assign requested address', ENETUNREACH: 'network is unreachable',
  EADDRINUSE: 'address already in use', ENOBUFS: 'no buffer space available', EAFNOSUPPORT: 'address family not supported by protocol',
  EPROTONOSUPPORT: 'protocol not supported', ENOTSUPP: 'operation not supported', EACCES: 'permission denied',
};

export function errnoText(name: string): string | undefined {
  return TEXTS[name];
}

export const ERRNO_TEXTS: readonly string[] = Object.values(TEXTS);

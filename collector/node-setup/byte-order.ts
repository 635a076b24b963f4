/**
 * Go's sort.Strings compares strings byte by byte (UTF-8); JavaScript's
 * default sort compares UTF-16 code units, which orders some non-ASCII
 * names differently. Runtimes sort conf files the Go way, so cnirec does.
 */
export function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

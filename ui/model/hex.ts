/** A hex dump of bytes that are not text: offset, 16 bytes in hex, and their printable ASCII. Pure. */

export interface HexLine {
  readonly offset: string;
  readonly hex: string;
  readonly ascii: string;
}

const PER_LINE = 16;

export function hexLines(bytes: Uint8Array, maxLines = 4096): HexLine[] {
  const lines: HexLine[] = [];
  for (let start = 0; start < bytes.length && lines.length < maxLines; start += PER_LINE) {
    const chunk = bytes.subarray(start, start + PER_LINE);
    const hex = Array.from(chunk, (b) => b.toString(16).padStart(2, '0'));
    const groups = [hex.slice(0, 8).join(' '), hex.slice(8).join(' ')].filter(Boolean).join('  ');
    const ascii = Array.from(chunk, (b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.')).join('');
    lines.push({ offset: start.toString(16).padStart(8, '0'), hex: groups, ascii });
  }
  return lines;
}

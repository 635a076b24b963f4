/**
 * The network a call's stdin names: libcni puts the network's `name` in every
 * plugin's config, STATUS and GC included (their CNI_CONTAINERID, CNI_NETNS,
 * CNI_IFNAME and CNI_ARGS are empty, so stdin is the only place a call says
 * which network it was about). Pure.
 */

/** Larger stdins are not parsed for a name: a config is kilobytes, and this runs on the write path. */
const MAX_PARSED_BYTES = 1024 * 1024;

/** `name` of the JSON config in `stdin`; null when not captured, not JSON, or nameless. */
export function networkOfStdin(stdin: Buffer): string | null {
  if (stdin.length === 0 || stdin.length > MAX_PARSED_BYTES) return null;
  let json: unknown;
  try {
    json = JSON.parse(stdin.toString('utf8'));
  } catch {
    return null;
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return null;
  const name = (json as Record<string, unknown>).name;
  return typeof name === 'string' && name !== '' ? name : null;
}

/**
 * Decodes one libcni cache file (`<cacheDir>/results/<network>-<id>-<ifname>`).
 * Pure: bytes in, a CacheEntry or a CacheProblem out. The file name is not
 * parsed: network names may contain '-', only the JSON says where they end.
 */

import { createHash } from 'node:crypto';
import { z } from 'zod';
import { podFromCacheArgs } from './pod-from-cache-args.js';
import { MAX_CACHE_FILE_BYTES, type CacheEntry, type CacheProblem } from './cache-types.js';

export type ParsedCacheFile = { readonly ok: true; readonly entry: CacheEntry } | { readonly ok: false; readonly problem: CacheProblem };

// libcni's cachedInfo. Only the fields we rely on are required; unknown ones pass (newer libcni may add some).
const CacheV1 = z.object({
  kind: z.literal('cniCacheV1'),
  containerId: z.string(),
  config: z.string().optional(),
  ifName: z.string(),
  networkName: z.string(),
  netns: z.string().optional(),
  cniArgs: z
    .array(z.tuple([z.string(), z.string()]))
    .nullish()
    .transform((v) => v ?? []),
  capabilityArgs: z.record(z.string(), z.unknown()).nullish(),
  result: z.unknown().optional(),
});

// A pre-cniCacheV1 file is the bare result: at least cniVersion or ips.
const LegacyResult = z.looseObject({ cniVersion: z.string().optional(), ips: z.array(z.unknown()).optional() }).refine((r) => r.cniVersion !== undefined || r.ips !== undefined, {
  message: 'neither a cniCacheV1 entry nor a CNI result (no "kind", "cniVersion" or "ips")',
});

const IpsField = z.object({ ips: z.array(z.object({ address: z.string() }).loose()) }).loose();

export function parseCacheFile(bytes: Buffer, path: string, dir: string, mtimeMs = 0): ParsedCacheFile {
  const problem = (kind: CacheProblem['kind'], message: string): ParsedCacheFile => ({ ok: false, problem: { kind, path, dir, message } });
  if (bytes.length > MAX_CACHE_FILE_BYTES) {
    return problem('too-large', `cache file ${path} is ${bytes.length} bytes (limit ${MAX_CACHE_FILE_BYTES}); libcni writes a few KiB, so it is not a CNI cache file or it is damaged: it was not read`);
  }
  const text = bytes.toString('utf8');
  if (text.trim().length === 0) {
    return problem('empty-file', `cache file ${path} is empty: libcni reads it as "unexpected end of JSON input", so DEL/CHECK for this attachment will fail; check that the disk is not full, then delete the file once the container is gone`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return problem('corrupt-json', `cache file ${path} is not valid JSON (${jsonErrorReason(err)}): libcni will fail DEL/CHECK for this attachment; delete the file once the container is gone`);
  }
  const digest = createHash('sha256').update(bytes).digest('hex');

  const isV1 = typeof json === 'object' && json !== null && 'kind' in json;
  if (isV1) {
    const v1 = CacheV1.safeParse(json);
    if (!v1.success) return problem('wrong-shape', `cache file ${path} is not a cniCacheV1 entry: ${describeIssues(v1.error)}`);
    const d = v1.data;
    const { config, configProblem } = decodeConfig(d.config);
    return {
      ok: true,
      entry: {
        path,
        dir,
        format: 'cniCacheV1',
        containerId: d.containerId,
        networkName: d.networkName,
        ifName: d.ifName,
        netns: d.netns ?? null,
        cniArgs: d.cniArgs,
        capabilityArgs: d.capabilityArgs ?? null,
        config,
        configProblem,
        result: d.result ?? null,
        ips: ipsOf(d.result),
        pod: podFromCacheArgs(d.cniArgs),
        digest,
        mtimeMs,
      },
    };
  }
  const legacy = LegacyResult.safeParse(json);
  if (!legacy.success) return problem('wrong-shape', `cache file ${path} is neither a cniCacheV1 entry nor a CNI result: ${describeIssues(legacy.error)}`);
  return {
    ok: true,
    entry: {
      path,
      dir,
      format: 'legacy',
      containerId: null,
      networkName: null,
      ifName: null,
      netns: null,
      cniArgs: [],
      capabilityArgs: null,
      config: null,
      configProblem: null,
      result: json,
      ips: ipsOf(json),
      pod: null,
      digest,
      mtimeMs,
    },
  };
}

type DecodedConfig = { readonly config: unknown; readonly configProblem: string | null };

/**
 * Every attachment of a network carries the same conflist, base64'd: decoded once and shared (entries are
 * read-only), so 10,000 files at startup do not mean 10,000 decodes and parses of the same bytes. Bounded,
 * oldest first out: a node has a handful of networks, and a config rewritten now and then.
 */
const decodedConfigs = new Map<string, DecodedConfig>();
const MAX_DECODED_CONFIGS = 64;

function decodeConfig(b64: string | undefined): DecodedConfig {
  if (b64 === undefined || b64 === '') return { config: null, configProblem: null };
  const seen = decodedConfigs.get(b64);
  if (seen) return seen;
  const decoded = decodeConfigUncached(b64);
  deepFreeze(decoded.config);
  if (decodedConfigs.size >= MAX_DECODED_CONFIGS) decodedConfigs.delete(decodedConfigs.keys().next().value!);
  decodedConfigs.set(b64, decoded);
  return decoded;
}

function decodeConfigUncached(b64: string): DecodedConfig {
  // Buffer.from ignores bad base64 characters silently; check the alphabet so garbage is reported, not half-decoded.
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) return { config: null, configProblem: 'the "config" field is not base64' };
  try {
    return { config: JSON.parse(Buffer.from(b64, 'base64').toString('utf8')) as unknown, configProblem: null };
  } catch (err) {
    return { config: null, configProblem: `the decoded "config" is not JSON (${jsonErrorReason(err)})` };
  }
}

/** Shared between entries, so nobody may change it. */
function deepFreeze(v: unknown): void {
  if (typeof v !== 'object' || v === null || Object.isFrozen(v)) return;
  Object.freeze(v);
  for (const child of Object.values(v)) deepFreeze(child);
}

/** Addresses without their prefix length: "10.88.0.7/16" → "10.88.0.7". */
function ipsOf(result: unknown): string[] {
  const r = IpsField.safeParse(result);
  if (!r.success) return [];
  return r.data.ips.map((ip) => ip.address.split('/')[0]!).filter((a) => a.length > 0);
}

/**
 * JSON.parse's message without the excerpt of the input V8 puts in some of
 * them (`Unexpected token 'x', "{"password…" is not valid JSON`): the
 * message is stored and logged, and the bytes it quotes may be secret.
 */
export function jsonErrorReason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/, ".*" is not valid JSON$/s, ' (not valid JSON)');
}

function describeIssues(err: z.ZodError): string {
  return err.issues
    .slice(0, 3)
    .map((i) => (i.path.length > 0 ? `"${i.path.join('.')}": ${i.message}` : i.message))
    .join('; ');
}

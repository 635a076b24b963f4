/**
 * A bundle's manifest.json: what the file holds (each file, its size and
 * sha256), the window and filters it was taken for, when, on which node and by
 * which cnirec. One zod schema, written by make-bundle.ts and checked by
 * read-bundle.ts, which refuses a file whose manifest or contents do not match.
 */

import { z } from 'zod';

export const BUNDLE_FORMAT = 'cnirec-bundle';
/** Bumped when a reader of the previous format could not read the new one. */
export const BUNDLE_FORMAT_VERSION = 1;

export const RECORD_FILE = 'record.db';
export const MANIFEST_FILE = 'manifest.json';
export const README_FILE = 'README.txt';

const iso = z.string().describe('ISO 8601, UTC');

export const bundleFileSchema = z.object({
  path: z.string().min(1),
  bytes: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** What it is, in a few words. */
  what: z.string(),
});

export const bundlePayloadsSchema = z.object({
  /** all: every payload the record holds; none: --no-payloads, or every one dropped for --max-size; partial: the oldest dropped for --max-size. */
  kept: z.enum(['all', 'partial', 'none']),
  /** Payloads of calls and helpers started before this were left out (partial); null otherwise. */
  leftOutBefore: iso.nullable(),
  /** Calls and helpers whose payloads were left out although they had some. */
  leftOut: z.number().int().nonnegative(),
  why: z.string().nullable(),
});

export const bundleManifestSchema = z.object({
  format: z.literal(BUNDLE_FORMAT),
  formatVersion: z.number().int().positive(),
  node: z.string(),
  takenAt: iso,
  cnirec: z.string(),
  /** The record's schema version (PRAGMA user_version of record.db). */
  schemaVersion: z.number().int().nonnegative(),
  window: z.object({ since: iso, until: iso, asked: z.object({ since: iso, until: iso }) }),
  filters: z.object({
    pods: z.array(z.object({ namespace: z.string(), name: z.string(), uid: z.string().nullable() })),
    calls: z.array(z.string()),
  }),
  payloads: bundlePayloadsSchema,
  maxBytes: z.number().int().positive().nullable(),
  /** Rows of each table of record.db. */
  rows: z.record(z.string(), z.number().int().nonnegative()),
  /** Whether a running daemon answered (its health, settings and log are in daemon/), or the database was read alone. */
  daemon: z.object({ answered: z.boolean(), note: z.string().nullable() }),
  files: z.array(bundleFileSchema),
  notes: z.array(z.string()),
});

export type BundleManifest = z.infer<typeof bundleManifestSchema>;
export type BundleFile = z.infer<typeof bundleFileSchema>;
export type BundlePayloads = z.infer<typeof bundlePayloadsSchema>;

/** The README.txt at the top of every bundle: what is inside and how to open it. */
export function readmeText(m: Pick<BundleManifest, 'node' | 'takenAt' | 'cnirec' | 'window' | 'filters' | 'payloads'>): string {
  const filters = [...m.filters.pods.map((p) => `pod ${p.namespace}/${p.name}${p.uid ? ` (uid ${p.uid})` : ''}`), ...m.filters.calls.map((c) => `call ${c}`)];
  return `cnirec bundle: the CNI record of node ${m.node}, taken at ${m.takenAt} by cnirec ${m.cnirec}.

Calls from ${m.window.since} to ${m.window.until}${filters.length > 0 ? `, of ${filters.join(', ')} (with everything they delegated)` : ''}.
Payloads (stdin, stdout, stderr): ${m.payloads.kept}${m.payloads.why ? ` (${m.payloads.why})` : ''}.

To read it, on any machine with cnirec (no root, no bpftrace, no CNI needed):

  cnirec open ${'<this file>.tar.gz'}          # web view and API on http://127.0.0.1:7070/
  cnirec calls --failed                     # then the usual commands against it:
  cnirec pod <namespace>/<name>             #   calls, show, pod, findings, replay, mcp
  cnirec show <call id>

Inside (manifest.json lists every file with its size and sha256):

  record.db          the record: a SQLite database of cnirec's own schema (calls with their
                     payloads as stored, helpers, kernel changes, findings, libcni cache and
                     host-local history, conf file versions, CNI STATUS readiness, the
                     container runtime's condition changes and sandboxes); its indexes
                     are left out to keep this file small (cnirec open rebuilds them; sqlite3
                     reads it as it is)
  node/              the node's CNI setup when the bundle was taken: doctor.json (as
                     \`cnirec doctor --json\`), plugins.json (binaries: name, size, sha256,
                     versions), files/ (conf dir files, libcni cache and host-local files as
                     they were), files.json, versions.json (the runtime and its CRI version
                     among them), net/ (links, addresses, routes, rules, iptables and
                     nftables); runtime.json when the daemon was down (the container runtime
                     asked directly: its conditions and sandboxes, or why it could not be)
  daemon/            when the daemon answered: health.json (/healthz), settings.json,
                     tracer.json, metrics.txt, node-cni.json, runtime.json (the container
                     runtime as it saw it), gc-plan.json (what a CNI GC would have freed),
                     log.jsonl (its last lines)

Secrets: every payload, conf file and cache file went through the daemon's redaction rules
(values under keys such as password, token, secret, key become "[redacted]"); only CNI_*
and trace context variables of a plugin's environment are ever stored. Text outside JSON is
kept as the plugin wrote it: look before you share.
`;
}

/**
 * What the store hands out about the node's CNI setup: conf file versions
 * and plugin binary versions. Flat camelCase mirrors of the rows, times in
 * milliseconds since the Unix epoch.
 */

export interface StoredConfVersion {
  readonly id: number;
  readonly path: string;
  readonly dir: string;
  readonly kind: 'file' | 'symlink' | 'other' | 'too-large' | 'unreadable';
  readonly sha256: string | null;
  readonly sizeBytes: number;
  readonly fileMtimeMs: number;
  /** When this version took effect. */
  readonly validFromMs: number;
  readonly firstSeenMs: number;
  /** When a newer version replaced it; null while current (or removed). */
  readonly supersededAtMs: number | null;
  readonly removedAtMs: number | null;
  readonly network: string | null;
  readonly cniVersion: string | null;
  readonly parseError: string | null;
  readonly types: readonly string[];
  readonly linkTarget: string | null;
  readonly redactions: readonly string[];
}

export interface StoredConfVersionWithBytes extends StoredConfVersion {
  /** After redaction; null when the file was not read. */
  readonly bytes: Buffer | null;
}

export interface StoredBinary {
  readonly id: number;
  readonly path: string;
  readonly dev: number;
  readonly ino: number;
  readonly sizeBytes: number;
  readonly mtimeMs: number;
  readonly sha256: string | null;
  readonly problem: string | null;
  readonly firstSeenMs: number;
  readonly lastSeenMs: number;
  /** Calls recorded running it. */
  readonly calls: number;
  /** What its last recorded VERSION probe reported; null when none was recorded (or captured in light mode). */
  readonly reported: { readonly cniVersion: string | null; readonly supportedVersions: readonly string[]; readonly callId: string; readonly atMs: number } | null;
}

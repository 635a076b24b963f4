/**
 * The doctor's report as data: what `cnirec doctor --json` prints and
 * `GET /api/v1/node/cni` answers, and what the human output is formatted
 * from. Times are milliseconds since the Unix epoch here; the API turns them
 * into ISO 8601.
 */

import type { FileStatus } from './conf-selection.js';
import type { ConfLoader, DoctorProblem, RuntimeCniPaths } from './types.js';
import type { CheckView } from './views.js';

export interface PluginCheck {
  readonly type: string;
  /** Where the conf names it: `plugins[0].ipam.type`. */
  readonly at: string;
  /** The binary libcni would run; null when none is found. */
  readonly path: string | null;
  readonly status: 'found' | 'missing' | 'not-executable' | 'not-regular-file';
  /** The CNI versions its last recorded VERSION probe reported; null when none was recorded. */
  readonly supportedVersions: readonly string[] | null;
}

export interface FileReport {
  readonly name: string;
  readonly path: string;
  readonly status: FileStatus;
  /** Why it has that status, for a person; empty for a plain `loaded`. */
  readonly why: string;
  readonly network: string | null;
  readonly cniVersion: string | null;
  readonly sizeBytes: number;
  readonly mtimeMs: number;
  readonly plugins: readonly PluginCheck[];
}

export interface ViewReport {
  readonly readBy: CheckView['readBy'];
  readonly label: string;
  readonly source: string | null;
  readonly confDir: string;
  readonly binDirs: readonly string[];
  readonly loader: ConfLoader;
  readonly maxConfNum: number | null;
  readonly defaultNetwork: string | null;
  readonly confDirExists: boolean;
  readonly files: readonly FileReport[];
  /** The pod's network: its file and name; null when the runtime loads none. */
  readonly active: { readonly file: string; readonly network: string | null } | null;
  readonly loadFailure: string | null;
}

/** What the daemon's record adds; null when no daemon answered. */
export interface RecordSummary {
  /** Plugins whose VERSION probes were recorded. */
  readonly probedPlugins: number;
  /** CNI_PATH values recorded calls ran with, most used first. */
  readonly cniPaths: readonly { readonly value: string; readonly calls: number; readonly lastAtMs: number }[];
}

export interface DoctorReport {
  /** No problem of any severity. */
  readonly ok: boolean;
  readonly generatedAtMs: number;
  readonly runtimes: readonly RuntimeCniPaths[];
  readonly views: readonly ViewReport[];
  readonly problems: readonly DoctorProblem[];
  readonly record: RecordSummary | null;
}

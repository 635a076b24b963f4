/**
 * `cnirec doctor` as a pure function: the node as read (runtime configs,
 * conf dirs, bin dirs), plus what the daemon's record knows when one
 * answered, in; the report out. The same function serves the CLI without a
 * daemon, the CLI with one, and `GET /api/v1/node/cni`.
 */

import type { BinDirListing } from './bin-dirs.js';
import { checkView, type ConfDirListing, type ReportedVersions } from './check-view.js';
import type { DoctorReport, RecordSummary, ViewReport } from './report.js';
import type { DoctorProblem, RuntimeCniPaths } from './types.js';
import { buildViews, type Requested } from './views.js';
import { isoFromMs } from '../../lib/index.js';

/** The node as the shell read it. */
export interface NodeSnapshot {
  readonly runtimes: readonly RuntimeCniPaths[];
  /** Runtime config files that could not be used. */
  readonly runtimeProblems: readonly DoctorProblem[];
  readonly requested: Requested;
  readonly confDirs: ReadonlyMap<string, ConfDirListing>;
  readonly binDirs: ReadonlyMap<string, BinDirListing>;
}

/** What the record knows (the daemon's database), when a daemon answered. */
export interface RecordKnowledge {
  /** The last VERSION probe recorded of each plugin binary (by path). */
  readonly pluginVersions: readonly { readonly path: string; readonly supportedVersions: readonly string[]; readonly probedAtMs: number }[];
  readonly cniPaths: RecordSummary['cniPaths'];
}

export function diagnose(node: NodeSnapshot, record: RecordKnowledge | null, nowMs: number): DoctorReport {
  const { views, problems: viewProblems } = buildViews(node.runtimes, node.requested);
  const reported: ReportedVersions | null = record ? new Map(record.pluginVersions.map((p) => [p.path, p])) : null;
  const problems: DoctorProblem[] = [...node.runtimeProblems, ...viewProblems];
  const reports: ViewReport[] = [];
  for (const view of views) {
    const { report, problems: found } = checkView(view, node.confDirs.get(view.confDir), node.binDirs, reported);
    reports.push(report);
    problems.push(...found);
    if (view.binDirs.length > 0 && view.binDirs.every((d) => node.binDirs.get(d)?.exists === false)) {
      problems.push({ code: 'bin-dir-missing', severity: 'error', path: view.binDirs[0] ?? null, message: `none of ${view.label}'s bin dirs exists (${view.binDirs.join(', ')}): no plugin can run; install the CNI plugins there or fix the bin dir` });
    }
  }
  if (record) problems.push(...cniPathProblems(record, views.flatMap((v) => v.binDirs)));
  const unique = dedupe(problems);
  return {
    ok: unique.length === 0,
    generatedAtMs: nowMs,
    runtimes: node.runtimes,
    views: reports,
    problems: unique,
    record: record ? { probedPlugins: record.pluginVersions.length, cniPaths: record.cniPaths } : null,
  };
}

/** A CNI_PATH recorded calls ran with that shares no directory with any bin dir checked: the runtime looks elsewhere. */
function cniPathProblems(record: RecordKnowledge, binDirs: readonly string[]): DoctorProblem[] {
  const known = new Set(binDirs);
  return record.cniPaths
    .filter((p) => p.value !== '' && p.value !== 'dummy' && !p.value.split(':').some((d) => known.has(d.replace(/(.)\/+$/, '$1'))))
    .map((p) => ({
      code: 'bin-dir-mismatch' as const,
      severity: 'warning' as const,
      path: null,
      message: `recorded calls ran with CNI_PATH=${p.value} (${p.calls} calls, last ${isoFromMs(p.lastAtMs)}), which holds none of the bin dirs checked (${[...known].join(', ')}): a runtime looks for plugins elsewhere; check it with --cni-bin-dir ${p.value.split(':')[0]}`,
    }));
}

function dedupe(problems: readonly DoctorProblem[]): DoctorProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => (seen.has(p.message) ? false : (seen.add(p.message), true)));
}

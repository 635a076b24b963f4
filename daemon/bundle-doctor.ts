/**
 * The doctor's report a bundle carries (node/doctor.json, as `cnirec doctor
 * --json` printed it on the node) back as the report the node CNI routes
 * present, so an opened bundle answers GET /api/v1/node/cni with the node's
 * setup, never the machine it is opened on. The inverse of api/present's
 * presentReport (times back to milliseconds); a round-trip test keeps them in step.
 */

import type { DoctorReportBody } from '../api/index.js';
import type { DoctorReport } from '../collector/index.js';

export const EMPTY_REPORT: DoctorReport = { ok: true, generatedAtMs: 0, runtimes: [], views: [], problems: [], record: null };

export function reportFromBody(b: DoctorReportBody): DoctorReport {
  return {
    ok: b.ok,
    generatedAtMs: Date.parse(b.generatedAt),
    runtimes: b.runtimes,
    views: b.views.map((v) => ({ ...v, files: v.files.map(({ mtime, ...f }) => ({ ...f, mtimeMs: Date.parse(mtime) })) })),
    problems: b.problems.map((p) => ({ code: p.code, severity: p.severity, message: p.message, ...(p.path !== null ? { path: p.path } : {}), ...(p.network !== null ? { network: p.network } : {}) })),
    record: b.record ? { probedPlugins: b.record.probedPlugins, cniPaths: b.record.cniPaths.map((c) => ({ value: c.value, calls: c.calls, lastAtMs: Date.parse(c.lastAt) })) } : null,
  };
}

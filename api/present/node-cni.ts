/** The node's CNI setup as the node CNI routes show it: the doctor's report, conf versions, binaries and GC analyses (times ISO 8601). */

import type { z } from 'zod';
import type { DoctorReport, RecordKnowledge } from '../../collector/index.js';
import { isoFromMs } from '../../lib/index.js';
import type { GcAnalysis, StoredBinary, StoredConfVersion } from '../../store/index.js';
import type { binarySchema, ConfVersionBody, DoctorReportBody, gcSchema, RecordKnowledgeBody } from '../schemas/node-cni.js';
import { isoFromMsOrNull } from './time.js';

export function presentReport(r: DoctorReport, watchedConfDirs: readonly string[]): DoctorReportBody {
  return {
    ok: r.ok,
    generatedAt: isoFromMs(r.generatedAtMs),
    runtimes: r.runtimes.map((x) => ({ ...x, sources: [...x.sources], binDirs: [...x.binDirs], extraConfDirs: x.extraConfDirs.map((e) => ({ ...e })), notes: [...x.notes] })),
    views: r.views.map((v) => ({
      ...v,
      binDirs: [...v.binDirs],
      files: v.files.map(({ mtimeMs, ...f }) => ({ ...f, mtime: isoFromMs(Math.floor(mtimeMs)), plugins: f.plugins.map((p) => ({ ...p, supportedVersions: p.supportedVersions ? [...p.supportedVersions] : null })) })),
    })),
    problems: r.problems.map((p) => ({ code: p.code, severity: p.severity, message: p.message, path: p.path ?? null, network: p.network ?? null })),
    record: r.record ? { probedPlugins: r.record.probedPlugins, cniPaths: r.record.cniPaths.map((c) => ({ value: c.value, calls: c.calls, lastAt: isoFromMs(c.lastAtMs) })) } : null,
    watchedConfDirs: [...watchedConfDirs],
  };
}

export function presentRecord(r: RecordKnowledge): RecordKnowledgeBody {
  return {
    pluginVersions: r.pluginVersions.map((p) => ({ path: p.path, supportedVersions: [...p.supportedVersions], probedAt: isoFromMs(p.probedAtMs) })),
    cniPaths: r.cniPaths.map((c) => ({ value: c.value, calls: c.calls, lastAt: isoFromMs(c.lastAtMs) })),
  };
}

export function presentConfVersion(v: StoredConfVersion): ConfVersionBody {
  return {
    id: v.id,
    path: v.path,
    dir: v.dir,
    kind: v.kind,
    sha256: v.sha256,
    sizeBytes: v.sizeBytes,
    fileMtime: isoFromMs(v.fileMtimeMs),
    validFrom: isoFromMs(v.validFromMs),
    firstSeen: isoFromMs(v.firstSeenMs),
    supersededAt: isoFromMsOrNull(v.supersededAtMs),
    removedAt: isoFromMsOrNull(v.removedAtMs),
    network: v.network,
    cniVersion: v.cniVersion,
    parseError: v.parseError,
    types: [...v.types],
    linkTarget: v.linkTarget,
    redactedPointers: [...v.redactions],
  };
}

export function presentBinary(b: StoredBinary): z.input<typeof binarySchema> {
  return {
    id: b.id,
    path: b.path,
    dev: b.dev,
    inode: b.ino,
    sizeBytes: b.sizeBytes,
    mtime: isoFromMs(b.mtimeMs),
    sha256: b.sha256,
    problem: b.problem,
    firstSeen: isoFromMs(b.firstSeenMs),
    lastSeen: isoFromMs(b.lastSeenMs),
    calls: b.calls,
    reported: b.reported ? { cniVersion: b.reported.cniVersion, supportedVersions: [...b.reported.supportedVersions], callId: b.reported.callId, at: isoFromMs(b.reported.atMs) } : null,
  };
}

export function presentGc(g: GcAnalysis): z.input<typeof gcSchema> {
  return {
    callId: g.callId,
    plugin: g.plugin,
    network: g.network,
    at: isoFromMs(g.atMs),
    ok: g.ok,
    validAttachments: g.validAttachments.map((a) => ({ ...a })),
    shouldFree: g.shouldFree.map((h) => ({ ...h })),
  };
}

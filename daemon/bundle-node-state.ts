/**
 * The node's CNI setup as it is when a bundle is taken, under node/: the
 * doctor's report as `cnirec doctor --json` prints it (with what the record
 * in the bundle adds: VERSION answers, CNI_PATH values, each network's STATUS
 * readiness, the container runtime's section), the plugin binaries of the bin dirs, the conf, cache and
 * host-local files, versions and the network state. Read from the node's
 * files and its database, read-only (never the daemon: it may be down).
 */

import { presentReadiness, presentReport } from '../api/index.js';
import { diagnose, readNode, type Redactor, type Requested } from '../collector/index.js';
import { createHeartbeatSieve, createPluginBinaries, createRecordKnowledge, openRecordReadOnly } from '../store/index.js';
import { hostVersions, listPlugins, stageNetState } from './bundle-host.js';
import { criVersionOf, doctorRuntimeOf, type RuntimeAtBundle } from './bundle-runtime.js';
import { stageNodeFiles } from './bundle-node-files.js';
import type { Stage } from './bundle-stage.js';

export interface NodeSetupInputs {
  readonly requested: Requested;
  readonly cacheDirs: readonly string[];
  readonly hostLocalDirs: readonly string[];
  readonly redactor: Redactor;
  readonly bpftrace: string;
  readonly env: NodeJS.ProcessEnv;
  /** The CRI endpoint was left to the usual sockets: a node where none answers (podman only) is no problem. */
  readonly criEndpointAuto?: boolean;
}

/**
 * Stages node/…; `db`: the node's database (read-only), for what its record adds; `runtime`: the container
 * runtime as the daemon saw it or as it answered the bundle (the doctor's runtime section, its version).
 * Returns notes for the manifest.
 */
export async function stageNodeState(stage: Stage, inputs: NodeSetupInputs, db: string, nowMs: number, runtime: RuntimeAtBundle | null): Promise<string[]> {
  const record = readRecord(db, nowMs);
  const report = diagnose(readNode({ requested: inputs.requested, env: inputs.env }), record.knowledge, nowMs);
  const readiness = record.readiness.map(presentReadiness);
  await stage.addJson(
    'node/doctor.json',
    { ...presentReport(report, []), daemon: null, readiness: readiness.length > 0 ? readiness : null, runtime: doctorRuntimeOf(runtime, inputs.criEndpointAuto ?? false) },
    'the node\'s CNI setup checked, as `cnirec doctor --json` prints it (with what the record adds)',
  );
  await stage.addJson('node/readiness.json', { items: readiness }, 'CNI STATUS readiness per network, from the record (as GET /api/v1/node/cni/status)');
  const binDirs = [...new Set([...report.views.flatMap((v) => v.binDirs), ...inputs.requested.binDirs])];
  const confDirs = [...new Set([...report.views.map((v) => v.confDir), ...inputs.requested.confDirs])];
  await stage.addJson('node/plugins.json', { binDirs, items: await listPlugins(binDirs, record.reported) }, 'the plugin binaries of the bin dirs: name, size, mode, sha256, recorded CNI versions, package');
  const files = await stageNodeFiles(stage, { confDirs, cacheDirs: inputs.cacheDirs, hostLocalDirs: inputs.hostLocalDirs }, inputs.redactor);
  await stage.addJson('node/files.json', { confDirs, cacheDirs: inputs.cacheDirs, hostLocalDirs: inputs.hostLocalDirs, items: files }, 'every conf, cache and host-local file looked at, and whether it was taken');
  await stage.addJson('node/versions.json', await hostVersions(inputs.bpftrace, criVersionOf(runtime)), 'versions: cnirec, Node.js, kernel, bpftrace, the container runtimes and the CRI they speak');
  return stageNetState(stage);
}

/** What the node's record says (read-only: a stopped daemon's file stays as it was): the doctor's record knowledge, readiness, the versions plugins reported. */
function readRecord(file: string, nowMs: number) {
  const db = openRecordReadOnly(file);
  try {
    const sieve = createHeartbeatSieve(db, { slowMs: Number.MAX_SAFE_INTEGER, onError: () => undefined });
    const knowledge = createRecordKnowledge(db).read(nowMs);
    const reported = new Map(createPluginBinaries(db).reportedVersions().map((r) => [r.path, r.supportedVersions] as const));
    return { knowledge, readiness: sieve.networks(), reported };
  } finally {
    db.close();
  }
}

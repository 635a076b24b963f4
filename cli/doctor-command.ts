/**
 * `cnirec doctor`: checks the node's CNI setup. It reads the runtimes'
 * configs, the conf dirs and the bin dirs itself, so it works with no
 * daemon; when one answers, it adds what the record knows (the versions
 * plugins reported to VERSION probes, the CNI_PATH calls ran with) and
 * each network's readiness as its plugins answer CNI STATUS.
 * Exit status: 0 when nothing is wrong, 1 when there is a problem (a
 * network not ready included), 2 on a usage error.
 */

import { diagnose, readNode, type RecordKnowledge } from '../collector/index.js';
import { presentReport, type ReadinessList, type RecordKnowledgeBody, type RuntimeStatusBody } from '../api/index.js';
import { parseCriEndpoint } from '../collector/index.js';
import { askRuntime, fromDaemon, networkNotReady, type DoctorRuntime } from './doctor-runtime.js';
import { getJson, type ClientOptions } from './api-client.js';
import { formatDoctor } from './doctor-format.js';
import { ClientError, UsageError } from './errors.js';
import { parseCommand } from './flags.js';
import { stdout } from './output.js';

const DOCTOR_USAGE = 'usage: cnirec doctor [--cni-conf-dir D]... [--cni-bin-dir D]... [--cri-endpoint PATH|none] [--json] [--no-daemon]';

/** A node's daemon answers in milliseconds; a doctor should not hang on one that does not. */
const DAEMON_TIMEOUT_MS = 3000;

export async function doctorCommand(args: string[], client: ClientOptions): Promise<number> {
  const { values } = parseCommand(
    args,
    {
      'cni-conf-dir': { type: 'string', multiple: true },
      'cni-bin-dir': { type: 'string', multiple: true },
      'cri-endpoint': { type: 'string' },
      json: { type: 'boolean' },
      'no-daemon': { type: 'boolean' },
    },
    DOCTOR_USAGE,
  );
  const dirs = (flag: string[] | undefined, env: string | undefined) =>
    (flag ?? (env ? [env] : []))
      .flatMap((d) => d.split(','))
      .map((d) => d.trim().replace(/(.)\/+$/, '$1'))
      .filter((d) => d.length > 0);
  const requested = { confDirs: dirs(values['cni-conf-dir'], process.env.CNIREC_CNI_CONF_DIR), binDirs: dirs(values['cni-bin-dir'], process.env.CNIREC_CNI_BIN_DIR) };
  for (const d of [...requested.confDirs, ...requested.binDirs]) if (!d.startsWith('/')) throw new UsageError(`--cni-conf-dir and --cni-bin-dir take absolute directories, not "${d}"`, DOCTOR_USAGE);

  const endpointText = values['cri-endpoint'] ?? process.env.CNIREC_CRI_ENDPOINT ?? '';
  const endpoint = parseCriEndpoint(endpointText);
  if (!endpoint.ok) throw new UsageError(`--cri-endpoint ${endpoint.message}`, DOCTOR_USAGE);

  let record: RecordKnowledge | null = null;
  let runtime: DoctorRuntime | null = null;
  let readiness: ReadinessList['items'] | null = null;
  let daemonNote: string | null = null;
  if (values['no-daemon']) daemonNote = '--no-daemon: the record was not asked';
  else {
    try {
      record = toKnowledge(await withTimeout(getJson<RecordKnowledgeBody>(client, '/api/v1/node/cni/record')));
      // A daemon that does not follow STATUS (an older one: 404, or 501) has no readiness to add.
      readiness = await withTimeout(getJson<ReadinessList>(client, '/api/v1/node/cni/status')).then(
        (r) => r.items,
        () => null,
      );
      // The daemon's view of the runtime (since when, leaks), unless asked for another socket than its own.
      if (values['cri-endpoint'] === undefined) {
        runtime = await withTimeout(getJson<RuntimeStatusBody>(client, '/api/v1/node/runtime')).then(
          (r) => (r.errorKind === 'off' ? null : fromDaemon(r, endpointText === '')),
          () => null,
        );
      }
    } catch (err) {
      const why = err instanceof ClientError && err.message.startsWith('no cnirec daemon answers') ? '' : ` (${err instanceof Error ? err.message : String(err)})`;
      daemonNote = `no daemon answered at ${client.api}${why}: the files were checked without the record (cniVersion is not checked against recorded VERSION probes)`;
    }
  }
  runtime ??= await askRuntime(endpoint.setting, DAEMON_TIMEOUT_MS);
  const now = Date.now();
  const report = presentReport(diagnose(readNode({ requested, env: process.env }), record, now), []);
  if (values.json) stdout.raw(`${JSON.stringify({ ...report, daemon: daemonNote === null ? client.api : null, readiness, runtime }, null, 2)}\n`);
  else stdout.lines(formatDoctor(report, { daemonNote, readiness, runtime }));
  const notReady = (readiness ?? []).some((n) => n.ready === false) || networkNotReady(runtime);
  return report.ok && !notReady ? 0 : 1;
}

function toKnowledge(b: RecordKnowledgeBody): RecordKnowledge {
  return {
    pluginVersions: b.pluginVersions.map((p) => ({ path: p.path, supportedVersions: p.supportedVersions, probedAtMs: Date.parse(p.probedAt) })),
    cniPaths: b.cniPaths.map((c) => ({ value: c.value, calls: c.calls, lastAtMs: Date.parse(c.lastAt) })),
  };
}

function withTimeout<T>(p: Promise<T>): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${DAEMON_TIMEOUT_MS / 1000} s`)), DAEMON_TIMEOUT_MS).unref())]);
}

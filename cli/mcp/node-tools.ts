/**
 * The tools over the node: list_findings (GET /api/v1/findings), node_cni (the doctor's report with the
 * record, GET /api/v1/node/cni, and the networks' readiness, GET /api/v1/node/cni/status, where the daemon
 * has it), ip_history (GET /api/v1/ips/:ip), tracer_status (GET /api/v1/tracer), and set_capture
 * (PUT /api/v1/tracer/mode), which changes what the tracer captures and so is offered only when the server
 * was started with --allow-capture-changes.
 */

import { isIP } from 'node:net';
import { z } from 'zod';
import { FINDING_SEVERITIES } from '../../store/index.js';
import { captureModeBodySchema, FINDING_KINDS, type RuntimeStatusBody } from '../../api/index.js';
import { getJson, putJson, route, type ClientOptions, type DoctorReportBody, type FindingPage, type IpHistory, type TracerStatus } from '../api-client.js';
import { ClientError } from '../errors.js';
import type { Answer, Tool } from './tool.js';

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

const listFindingsInput = z.strictObject({
  kind: z.array(z.enum(FINDING_KINDS)).min(1).optional().describe('Only these kinds'),
  severity: z.enum(FINDING_SEVERITIES).optional().describe('critical: the runtime is stuck on it (a DEL or ADD loop); warning: something will break or leaks; info: worth knowing'),
  pod: z
    .string()
    .max(507)
    .regex(/^[^/\s]+\/[^/\s]+$/, 'must be NAMESPACE/NAME')
    .optional()
    .describe('Only findings about this pod, NAMESPACE/NAME'),
  container: z.string().min(1).max(253).optional().describe('Only findings about this container (CNI_CONTAINERID)'),
  includeResolved: z.boolean().optional().describe('Also findings whose condition has ended (default: open ones only)'),
  limit: z.number().int().min(1).max(100).default(20).describe('Findings per page, 1 to 100'),
  cursor: z.string().min(1).max(512).optional().describe('nextCursor of the previous answer, with the same filters'),
});

export const listFindings: Tool<typeof listFindingsInput> = {
  name: 'list_findings',
  title: 'What went wrong on this node',
  description:
    'Open findings, worst first: DEL/ADD loops (critical: the runtime is stuck), broken or stale libcni cache files, leaked IPs, ADDs that left no cache file, … ' +
    'One item per kind and subject, with its pod, container, the call to open with get_call (callId) and how often it was seen; total and byKind count all pages. ' +
    'When nextCursor is not null, call again with it for more.',
  input: listFindingsInput,
  output: z.looseObject({
    total: z.number().int(),
    byKind: z.array(z.record(z.string(), z.unknown())),
    items: z.array(z.record(z.string(), z.unknown())),
    nextCursor: z.string().nullable(),
  }),
  async run(args, client): Promise<Answer> {
    const page: FindingPage = await getJson(
      client,
      route('/api/v1/findings', {
        kind: args.kind?.join(','),
        severity: args.severity,
        pod: args.pod,
        containerId: args.container,
        includeResolved: args.includeResolved ? 'true' : undefined,
        limit: args.limit,
        cursor: args.cursor,
      }),
    );
    const bySeverity = FINDING_SEVERITIES.map((s) => [s, page.byKind.filter((k) => k.severity === s).reduce((n, k) => n + k.count, 0)] as const).filter(([, n]) => n > 0);
    const what = args.includeResolved ? 'finding' : 'open finding';
    return {
      summary:
        `${plural(page.total, what)}${bySeverity.length > 0 ? ` (${bySeverity.map(([s, n]) => `${n} ${s}`).join(', ')})` : ''}, ${page.items.length} given here, worst first.` +
        (page.nextCursor === null ? '' : ' More: call list_findings again with cursor=nextCursor.'),
      data: { total: page.total, byKind: page.byKind, items: page.items, nextCursor: page.nextCursor },
    };
  },
};

const noInput = z.strictObject({});

export const nodeCni: Tool<typeof noInput> = {
  name: 'node_cni',
  title: "The node's CNI setup",
  description:
    "The node's CNI setup checked as `cnirec doctor` does, with what the record adds: each runtime's conf dir and bin dirs, which conf file is active and why, " +
    'every problem (JSON errors, cniVersion, missing or broken plugins) one line each; and each network\'s readiness from the runtime\'s STATUS calls, ' +
    'where the daemon records it (readiness is null otherwise, readinessNote says why).',
  input: noInput,
  output: z.looseObject({
    report: z.record(z.string(), z.unknown()).describe("The doctor's report: ok, runtimes, views, problems, record"),
    readiness: z.unknown().describe('The networks\' readiness as the daemon reports it; null when it does not'),
    readinessNote: z.string().nullable(),
    runtime: z
      .unknown()
      .describe("The container runtime's side (GET /api/v1/node/runtime); null when the daemon does not ask it; from a bundle, as recorded when it was taken (runtime.recorded)"),
  }),
  async run(_args, client): Promise<Answer> {
    const report: DoctorReportBody = await getJson(client, '/api/v1/node/cni');
    let readiness: unknown = null;
    let readinessNote: string | null = null;
    try {
      readiness = await getJson(client, '/api/v1/node/cni/status');
    } catch (err) {
      if (!(err instanceof ClientError)) throw err;
      readinessNote = `this daemon reports no network readiness (${err.message})`;
    }
    const runtime = await getJson<RuntimeStatusBody>(client, '/api/v1/node/runtime').catch((err: unknown) => {
      if (err instanceof ClientError) return null;
      throw err;
    });
    const problems = report.problems.length;
    const networkNotReady = runtime?.reachable === true && runtime.conditions.some((c) => c.type === 'NetworkReady' && !c.status);
    // From an opened bundle: as recorded when it was taken (runtime.recorded), in the past tense.
    const then = runtime?.recorded ? ' when the bundle was taken' : '';
    const runtimeText =
      runtime === null || runtime.errorKind === 'off'
        ? 'the container runtime is not asked by this daemon'
        : !runtime.reachable
          ? `the container runtime ${then ? 'could not be asked' : 'cannot be asked'}${then} (see runtime.error)`
          : networkNotReady
            ? then
              ? `the container runtime reported NetworkReady=false${then}: the node was NotReady (see runtime.conditions)`
              : 'the container runtime reports NetworkReady=false: the node is NotReady (see runtime.conditions)'
            : `the container runtime ${then ? 'answered' : 'answers'}${then}, ${plural(runtime.leaks.confirmed, 'leaked attachment')} confirmed`;
    return {
      summary: `Node CNI setup: ${report.ok ? 'no problem found' : `${plural(problems, 'problem')} (see report.problems)`}; ${plural(report.views.length, 'conf dir view')}; network readiness ${readiness === null ? 'not reported by this daemon' : 'given (see readiness)'}; ${runtimeText}.`,
      data: { report, readiness, readinessNote, runtime },
    };
  },
};

const ipInput = z.strictObject({
  ip: z
    .string()
    .max(64)
    .refine((s) => isIP(s) !== 0, 'must be an IPv4 or IPv6 address without prefix length, such as 10.88.0.5')
    .describe('An IPv4 or IPv6 address, without prefix length (10.88.0.5)'),
});

export const ipHistory: Tool<typeof ipInput> = {
  name: 'ip_history',
  title: 'Who held an IP address',
  description:
    "Who held an address and when, oldest first, from host-local's reservation files and libcni's cached results: network, container, interface, pod, from/to (to null while held). " +
    'The question behind a leaked or doubly assigned IP.',
  input: ipInput,
  output: z.looseObject({ ip: z.string(), history: z.array(z.record(z.string(), z.unknown())) }),
  async run(args, client): Promise<Answer> {
    const h: IpHistory = await getJson(client, `/api/v1/ips/${encodeURIComponent(args.ip)}`);
    const held = h.history.filter((x) => x.to === null).length;
    return { summary: `${plural(h.history.length, 'holding')} of this address recorded, ${held} held now.`, data: { ...h } };
  },
};

export const tracerStatus: Tool<typeof noInput> = {
  name: 'tracer_status',
  title: 'What the tracer captures and has lost',
  description:
    'Whether calls are being recorded now (running, ready), the capture mode (full: with stdin/stdout/stderr bytes; light: without) and why, ' +
    'records lost, restarts, gaps when nothing was recorded (lastGap), and the standby tracer. Read it before trusting that a call is missing.',
  input: noInput,
  output: z.looseObject({ running: z.boolean(), ready: z.boolean(), mode: z.string() }),
  async run(_args, client: ClientOptions): Promise<Answer> {
    const t: TracerStatus = await getJson(client, '/api/v1/tracer');
    return { summary: tracerSummary(t), data: { ...t } };
  },
};

function tracerSummary(t: TracerStatus): string {
  const state = !t.running ? 'not running: nothing is recorded' : t.ready ? 'recording' : 'starting (not recording yet)';
  const capture = t.capture ? `, capture setting ${t.capture.setting}` : '';
  return `Tracer ${state}; mode ${t.mode}${capture}; ${plural(t.lostEvents, 'record')} lost, ${plural(t.restarts, 'restart')}, ${plural(t.gaps, 'gap')} in recording.`;
}

export const setCapture: Tool<typeof captureModeBodySchema> = {
  name: 'set_capture',
  title: 'Change what the tracer captures',
  description:
    'Changes the capture setting: full (payload bytes too, for chasing a failure; narrow it to a pod or namespace), light (no payloads), or auto (the configured policy). ' +
    'forSeconds makes it lapse by itself. Changes the node\'s recording for everyone: only when asked to.',
  input: captureModeBodySchema,
  output: z.looseObject({ running: z.boolean(), mode: z.string() }),
  async run(args, client): Promise<Answer> {
    const t: TracerStatus = await putJson(client, '/api/v1/tracer/mode', args);
    return { summary: `Capture set to ${args.mode}${args.forSeconds ? ` for ${args.forSeconds} s` : ''}. ${tracerSummary(t)}`, data: { ...t } };
  },
};

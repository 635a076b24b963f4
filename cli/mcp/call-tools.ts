/**
 * The tools over recorded calls: find_calls (GET /api/v1/calls, brief summaries a page at a time),
 * get_call (GET /api/v1/calls/:id, one call whole with its streams cut to a cap) and pod_story
 * (GET /api/v1/pods/:namespace/:name, a pod's sandboxes and calls as trees). The daemon checks what it
 * is asked (times, ids) and its refusals name the field; these schemas refuse what a model gets wrong
 * before a request is made.
 */

import { z } from 'zod';
import { CALL_STATUSES, CNI_COMMANDS, TIME_PARAM_HELP, lostRecordsText } from '../../api/index.js';
import { getJson, route, type CallDetail, type CallPage, type PodStory } from '../api-client.js';
import { ClientError } from '../errors.js';
import { briefCall, briefTree, sizeRecord, type BriefTree } from './sizing.js';
import { ToolArgumentError, type Answer, type Tool } from './tool.js';

const name = (what: string) => z.string().min(1).max(253).describe(what);
const time = (what: string) => z.string().min(1).max(64).describe(`${what}: ${TIME_PARAM_HELP}`);
const podRef = z
  .string()
  .max(507)
  .regex(/^[^/\s]+\/[^/\s]+$/, 'must be NAMESPACE/NAME')
  .describe('The pod as NAMESPACE/NAME');

const findCallsInput = z.strictObject({
  pod: z.string().min(1).max(507).optional().describe('The pod: NAMESPACE/NAME, or its NAME alone (then any namespace, or the one in `namespace`)'),
  namespace: name('Pod namespace (K8S_POD_NAMESPACE)').optional(),
  container: name('CNI_CONTAINERID, the sandbox; a 12-character prefix matches too').optional(),
  command: z.enum(CNI_COMMANDS).optional().describe('CNI_COMMAND'),
  plugin: name('Plugin binary name (bridge, host-local, …)').optional(),
  failed: z.boolean().optional().describe('true: only calls that ended badly (non-zero exit or a signal); false: only those that succeeded'),
  status: z.enum(CALL_STATUSES).optional().describe('running: started and not ended (a hung plugin); incomplete: the end was never seen'),
  since: time('Calls started at or after').optional(),
  until: time('Calls started before').optional(),
  minDurationMs: z.number().min(0).optional().describe('Only calls that took at least this many milliseconds'),
  includeVersionProbes: z.boolean().optional().describe('Also VERSION probes (hidden by default)'),
  detail: z.enum(['brief', 'full']).default('brief').describe('brief: the fields that pick a call (default); full: every field of each summary'),
  limit: z.number().int().min(1).max(100).default(20).describe('Calls per page, 1 to 100'),
  cursor: z.string().min(1).max(512).optional().describe('nextCursor of the previous answer, with the same filters, for the next (older) page'),
});

export const findCalls: Tool<typeof findCallsInput> = {
  name: 'find_calls',
  title: 'Find recorded CNI calls',
  description:
    'Recorded CNI plugin calls on this node, newest first, as brief summaries (id, command, plugin, pod, container, outcome, duration, error in one line). ' +
    'Filter by pod, namespace, container, command, plugin, failed, status, time window or minimum duration. ' +
    'Lists are capped: when nextCursor is not null, call again with it for older calls. Open one call with get_call.',
  input: findCallsInput,
  output: z.looseObject({
    calls: z.array(z.record(z.string(), z.unknown())).describe('Newest first'),
    nextCursor: z.string().nullable().describe('Pass as cursor for the next, older page; null when there are no more'),
  }),
  async run(args, client): Promise<Answer> {
    const pod = splitPod(args.pod, args.namespace);
    const page: CallPage = await getJson(
      client,
      route('/api/v1/calls', {
        namespace: pod.namespace,
        pod: pod.name,
        containerId: args.container,
        command: args.command,
        plugin: args.plugin,
        failed: args.failed === undefined ? undefined : String(args.failed),
        status: args.status,
        since: args.since,
        until: args.until,
        minDurationMs: args.minDurationMs,
        includeVersion: args.includeVersionProbes ? 'true' : undefined,
        limit: args.limit,
        cursor: args.cursor,
      }),
    );
    const failed = page.items.filter((c) => c.ok === false).length;
    const running = page.items.filter((c) => c.status === 'running').length;
    const more = page.nextCursor === null ? '' : ' More are recorded: call find_calls again with the same filters and cursor=nextCursor.';
    return {
      summary: `${page.items.length} call${page.items.length === 1 ? '' : 's'} (${failed} failed, ${running} running), newest first.${more}${page.items.length > 0 ? ' get_call with an id gives that call whole.' : ''}`,
      data: { calls: args.detail === 'full' ? page.items : page.items.map(briefCall), nextCursor: page.nextCursor },
    };
  },
};

/** `ns/name`, or `name` with `namespace` beside it; the two must not name different namespaces. */
function splitPod(pod: string | undefined, namespace: string | undefined): { namespace: string | undefined; name: string | undefined } {
  if (pod === undefined) return { namespace, name: undefined };
  const parts = pod.split('/');
  if (parts.length > 2 || parts.some((p) => p === '')) throw new ToolArgumentError(`pod takes NAMESPACE/NAME or NAME, not "${pod}"`);
  if (parts.length === 1) return { namespace, name: parts[0] };
  if (namespace !== undefined && namespace !== parts[0]) throw new ToolArgumentError(`pod "${pod}" and namespace "${namespace}" name different namespaces: give one`);
  return { namespace: parts[0], name: parts[1] };
}

const getCallInput = z.strictObject({
  id: z.string().min(1).max(128).describe('The call id, as find_calls or pod_story give it'),
  maxPayloadBytes: z.number().int().min(256).max(262_144).default(8192).describe('Bytes of each captured stream (stdin, stdout, stderr, helpers\' output) to give, 256 to 262144; longer ones are cut and flagged'),
});

/** Any field but the streams: the parsed config and result, the env, the delegates' list, what the record gains. */
const FIELD_BYTES_PER_PAYLOAD_BYTE = 4;

export const getCall: Tool<typeof getCallInput> = {
  name: 'get_call',
  title: 'One CNI call whole',
  description:
    'One recorded call whole: its outcome and error, caveats (lostRecords, incomplete, truncated streams, envTruncated), the CNI_* environment, ' +
    'stdin (the network config), stdout (the result or CNI error), stderr, config and result parsed, delegated calls, helper processes and their output, ' +
    'and any further fields the record holds. Each stream gives text (or base64 when its bytes are not UTF-8), cut to maxPayloadBytes: ' +
    'cut=true when shortened here, truncated=true when the capture itself was incomplete, redacted=true when secrets were replaced before storing. ' +
    '`cut` lists everything shortened here.',
  input: getCallInput,
  output: z.looseObject({
    id: z.string(),
    cut: z.array(z.string()).describe('What was shortened or left out to fit: stream paths and large fields; empty when nothing was'),
  }),
  async run(args, client): Promise<Answer> {
    let detail: CallDetail;
    try {
      detail = await getJson(client, `/api/v1/calls/${encodeURIComponent(args.id)}`);
    } catch (err) {
      if (err instanceof ClientError && /^No call with id/.test(err.message)) throw new ClientError(`${err.message} find_calls lists the calls recorded, with their ids.`);
      throw err;
    }
    const sized = sizeRecord(detail, { payloadBytes: args.maxPayloadBytes, fieldBytes: Math.max(32_768, args.maxPayloadBytes * FIELD_BYTES_PER_PAYLOAD_BYTE) });
    const outcome = detail.status !== 'finished' ? detail.status : detail.ok ? 'succeeded' : detail.signal !== null ? `failed (signal ${detail.signal})` : `failed (exit ${detail.exitCode})`;
    const caveats = [detail.lostRecords && lostRecordsText(detail.lostRecordsCause), detail.incomplete && 'its end was not seen', detail.captureMode === 'light' && 'recorded without payloads (light capture)'].filter(Boolean);
    return {
      summary:
        `Call ${detail.id}: ${outcome}, ${detail.children.length} delegated call${detail.children.length === 1 ? '' : 's'}, ${detail.helpers.length} helper${detail.helpers.length === 1 ? '' : 's'}.` +
        (caveats.length > 0 ? ` Caveats: ${caveats.join('; ')}.` : '') +
        (sized.cut.length > 0 ? ` ${sized.cut.length} part${sized.cut.length === 1 ? '' : 's'} cut to fit (see cut; a larger maxPayloadBytes gives more).` : ''),
      data: { ...sized.value, cut: sized.cut },
    };
  },
};

const podStoryInput = z.strictObject({
  pod: podRef,
  uid: name('Pick one pod when the name was reused (the pod UID)').optional(),
  since: time('Calls started at or after').optional(),
  until: time('Calls started before').optional(),
  maxCalls: z.number().int().min(1).max(500).default(100).describe('Top-level calls to give (the newest), with their delegated calls and helpers; 1 to 500'),
});

/** Cache entries carry whole conflists and results: the story keeps each field to this. */
const STORY_FIELD_BYTES = 4096;

export const podStory: Tool<typeof podStoryInput> = {
  name: 'pod_story',
  title: "A pod's CNI story",
  description:
    "Everything CNI did for one pod: its sandboxes in order, each with its open findings, libcni's cache entries and its calls as trees " +
    '(a runtime\'s call, the calls it delegated, the helpers each ran), with the time each command took. The first question about a pod stuck in ContainerCreating. ' +
    'Calls are brief; get_call gives one whole. When omittedCalls > 0, older calls were left out: find_calls with the pod pages through all.',
  input: podStoryInput,
  output: z.looseObject({
    pod: z.record(z.string(), z.unknown()),
    sandboxes: z.array(z.record(z.string(), z.unknown())),
    omittedCalls: z.number().int().describe('Older top-level calls left out to fit maxCalls'),
  }),
  async run(args, client): Promise<Answer> {
    const [namespace, podName] = args.pod.split('/') as [string, string];
    const story: PodStory = await getJson(
      client,
      route(`/api/v1/pods/${encodeURIComponent(namespace)}/${encodeURIComponent(podName)}`, { podUid: args.uid, since: args.since, until: args.until }),
    );
    // The newest maxCalls top-level calls: counted from the last sandbox's last call back.
    let budget = args.maxCalls;
    let omitted = 0;
    const sandboxes = story.sandboxes
      .slice()
      .reverse()
      .map((sb) => {
        const keep = Math.min(budget, sb.calls.length);
        budget -= keep;
        omitted += sb.calls.length - keep;
        const calls: BriefTree[] = sb.calls.slice(sb.calls.length - keep).map(briefTree);
        return { ...sb, calls, cache: sb.cache.map((entry) => sizeRecord(entry, { payloadBytes: STORY_FIELD_BYTES, fieldBytes: STORY_FIELD_BYTES }).value) };
      })
      .reverse();
    const failed = story.calls.filter((c) => c.ok === false).length;
    const findings = story.sandboxes.reduce((n, sb) => n + sb.findings.length, 0);
    return {
      summary:
        `${story.sandboxes.length} sandbox${story.sandboxes.length === 1 ? '' : 'es'}, ${story.calls.length} top-level call${story.calls.length === 1 ? '' : 's'} (${failed} failed), ${findings} open finding${findings === 1 ? '' : 's'}.` +
        (omitted > 0 || story.truncated ? ' Older calls were left out (omittedCalls, truncated): find_calls with this pod pages through them.' : '') +
        ' get_call with a call id gives its error, stdin, stdout and stderr.',
      data: { pod: story.pod, totals: story.totals, truncated: story.truncated, omittedCalls: omitted, sandboxes },
    };
  },
};

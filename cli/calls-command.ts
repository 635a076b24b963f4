/**
 * `cnirec calls`: recorded calls, newest first, a header row and one line
 * each (age, command, plugin, outcome, duration, pod, id, and what went
 * wrong); `-o wide` for absolute times, the caller and the container;
 * `--json` (or `-o json`) for the API's summaries as NDJSON. Says when
 * there are more than it showed, and how to see them.
 */

import type { CallPage } from '../api/index.js';
import { getJson, route, type ClientOptions } from './api-client.js';
import { UsageError } from './errors.js';
import { intFlag, numberFlag, OUTPUT_FLAGS, outputMode, parseCommand, podFlag } from './flags.js';
import { callHeader, callLine } from './format.js';
import { dim, stderr, stdout } from './output.js';

export const CALLS_USAGE = `usage: cnirec calls [--pod NS/NAME] [--namespace NS] [--container ID] [--command C] [--plugin P] [--network N]
                   [--failed] [--slow MS] [--running] [--since T] [--until T] [--include-version]
                   [--limit N | --all] [-o wide|json]`;

/** Filter flags shared by `calls` and `tail`. */
export const CALL_FILTER_FLAGS = {
  pod: { type: 'string' },
  namespace: { type: 'string' },
  command: { type: 'string' },
  plugin: { type: 'string' },
  failed: { type: 'boolean' },
  since: { type: 'string' },
  'include-version': { type: 'boolean' },
} as const;

/** Query parameters of /api/v1/calls (and the tail) from the shared flags: `--pod ns/name`, or `--pod name --namespace ns`. */
export function callFilterQuery(values: Record<string, string | boolean | undefined>, usage: string): Record<string, string | undefined> {
  const pod = typeof values.pod === 'string' ? podFlag(values.pod, '--pod', usage, true) : undefined;
  const namespace = typeof values.namespace === 'string' ? values.namespace : undefined;
  if (pod?.namespace !== undefined && namespace !== undefined && pod.namespace !== namespace) {
    throw new UsageError(`--pod ${values.pod as string} and --namespace ${namespace} name different namespaces`, usage);
  }
  return {
    namespace: pod?.namespace ?? namespace,
    pod: pod?.name,
    // CNI_COMMAND is upper case; people type add.
    command: typeof values.command === 'string' ? values.command.toUpperCase() : undefined,
    plugin: typeof values.plugin === 'string' ? values.plugin : undefined,
    failed: values.failed ? 'true' : undefined,
    since: typeof values.since === 'string' ? values.since : undefined,
    includeVersion: values['include-version'] ? 'true' : undefined,
  };
}

const PAGE_FOR_ALL = 500;

export async function callsCommand(args: string[], client: ClientOptions): Promise<number> {
  const { values } = parseCommand(
    args,
    { ...CALL_FILTER_FLAGS, network: { type: 'string' }, container: { type: 'string' }, until: { type: 'string' }, slow: { type: 'string' }, running: { type: 'boolean' }, limit: { type: 'string' }, all: { type: 'boolean' }, ...OUTPUT_FLAGS },
    CALLS_USAGE,
  );
  const mode = outputMode(values, CALLS_USAGE);
  const limit = intFlag(values.limit, '--limit', { min: 1, max: 1000, usage: CALLS_USAGE });
  if (limit !== undefined && values.all) throw new UsageError('--limit and --all do not go together: --all lists every call', CALLS_USAGE);
  const query = {
    ...callFilterQuery(values, CALLS_USAGE),
    containerId: values.container,
    network: values.network,
    until: values.until,
    minDurationMs: numberFlag(values.slow, '--slow', CALLS_USAGE),
    // Calls started and not ended: a hung plugin is the one that has run the longest.
    status: values.running ? 'running' : undefined,
    limit: values.all ? PAGE_FOR_ALL : (limit ?? 50),
  };

  const nowMs = Date.now();
  const lineOptions = { time: mode === 'wide' ? 'absolute' : 'age', wide: mode === 'wide', nowMs, errorWidth: mode === 'wide' ? 300 : 100 } as const;
  let cursor: string | null = null;
  let shown = 0;
  do {
    const page: CallPage = await getJson(client, route('/api/v1/calls', { ...query, cursor }));
    if (mode === 'json') {
      if (page.items.length > 0) stdout.raw(page.items.map((c) => `${JSON.stringify(c)}\n`).join(''));
    } else {
      if (shown === 0 && page.items.length > 0) stdout.line(callHeader(lineOptions));
      stdout.lines(page.items.map((c) => callLine(c, lineOptions)));
    }
    shown += page.items.length;
    cursor = page.nextCursor;
  } while (cursor !== null && values.all);

  if (mode !== 'json' && shown === 0) stderr.line('no calls match');
  if (cursor !== null) stderr.line(dim(`showing the newest ${shown}; more: --limit N (up to 1000) or --all`));
  return 0;
}

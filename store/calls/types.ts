/**
 * What the store hands to its readers (the API, the CLI). Flat, camelCase
 * mirrors of the `calls` and `helpers` rows: the API turns them into JSON and
 * derives text from the bytes itself, so nothing here is decoded or pretty.
 */

import type { CallStatus, CollectorEvent } from '../../collector/index.js';
import type { CallColumnSpec, FullOf, HelperColumnSpec, SummaryOf } from './call-columns.js';
export type { StreamSize } from './call-columns.js';
import type { StoredTracerEvent, TracerEventKind } from '../tracer-events/index.js';

/**
 * A call as every list shows it: its columns (call-columns.ts) but the
 * payloads, argv and env, each stream as its sizes. Times are whole
 * microseconds since the Unix epoch (the collector's fraction is dropped);
 * `coreDumped` and `ok` are null when the call's end was not seen.
 */
export type StoredCallSummary = SummaryOf<CallColumnSpec>;

/** A helper as the collector published it, its outcome flattened into the columns (helper columns in call-columns.ts). */
export type StoredHelper = FullOf<HelperColumnSpec>;

/** A helper with the sizes of what it printed, not the bytes (for the pod story). */
export type StoredHelperSummary = SummaryOf<HelperColumnSpec>;

/** Which of a pod name's calls a story is about; everything when empty. */
export interface PodCallScope {
  /** Only that pod's calls: a name reused by several pods has one UID each. */
  readonly podUid?: string;
  /** Calls started at or after (µs since the epoch). */
  readonly sinceUs?: number;
  /** Calls started before (exclusive). */
  readonly untilUs?: number;
}

export interface PodCallGraph {
  /** The pod's own calls (its K8S_POD_NAMESPACE and K8S_POD_NAME) in the scope asked for, oldest first. */
  readonly calls: StoredCallSummary[];
  /** Calls those delegated to, at any depth and whenever they started, that are not the pod's own (no pod CNI_ARGS), oldest first. */
  readonly delegated: StoredCallSummary[];
  /** Helper processes of all of the above by call id, in order; calls without helpers are absent. */
  readonly helpers: ReadonlyMap<string, StoredHelperSummary[]>;
  /** The pod has more calls than MAX_POD_CALLS: only the newest are in `calls`. */
  readonly truncated: boolean;
}

/** A call in full: every column, the exact bytes captured (`bytes.length` may be below `totalBytes` when truncated), and its helpers. */
export type StoredCall = FullOf<CallColumnSpec> & { readonly helpers: readonly StoredHelper[] };

/** Every field narrows the list; absent fields do not filter. */
export interface CallFilter {
  readonly namespace?: string;
  readonly pod?: string;
  readonly podUid?: string;
  readonly containerId?: string;
  readonly command?: string;
  readonly plugin?: string;
  /** true: calls that ended badly (ok = 0); false: calls that succeeded (ok = 1). */
  readonly failed?: boolean;
  readonly minDurationUs?: number;
  /** Inclusive lower bound on startedAtUs. */
  readonly sinceUs?: number;
  /** Exclusive upper bound on startedAtUs, so adjacent windows do not overlap. */
  readonly untilUs?: number;
  /**
   * VERSION probes are noise in most views: hidden unless true (or `command` is 'VERSION'). Successful
   * STATUS heartbeats are hidden unless `command` is 'STATUS'.
   */
  readonly includeVersion?: boolean;
  readonly status?: CallStatus;
  readonly parentId?: string;
  /** The CNI network (stdin's `name`, else the conf listing the plugin's type). */
  readonly network?: string;
}

export interface CallPage {
  /** Newest first. */
  readonly items: StoredCallSummary[];
  /** Pass back to get the next (older) page; null when this is the last one. */
  readonly nextCursor: string | null;
}

/** What a container id given by a client names. */
export type ContainerIdMatch =
  | { readonly kind: 'exact'; readonly containerId: string }
  /** The one container id starting with the text given. */
  | { readonly kind: 'prefix'; readonly containerId: string }
  /** Several start with it (the first few). */
  | { readonly kind: 'ambiguous'; readonly candidates: readonly string[] }
  | { readonly kind: 'none' };

/** Where a failed call's error is: the CNI error on stdout (when JSON), and the first bytes of both streams. */
export interface FailureText {
  readonly msg: string | null;
  readonly details: string | null;
  readonly stdoutHead: Buffer;
  readonly stderrHead: Buffer;
}

export interface CallStore {
  /** Writes a batch in one transaction: all of it lands or none of it does. */
  writeEvents(events: readonly CollectorEvent[]): void;
  recordTracerEvent(kind: TracerEventKind, detail: unknown, atUs: number): void;
  /** Newest first. */
  listTracerEvents(limit: number): StoredTracerEvent[];
  /** For daemon startup: calls a previous run left running can never finish now. Returns how many. */
  markRunningAsIncomplete(reason: string): number;
  getCall(id: string): StoredCall | null;
  listCalls(filter: CallFilter, limit: number, cursor?: string | null): CallPage;
  /** The pod's calls, everything they delegated to and their helpers, without payloads: a few queries in all. */
  podCallGraph(namespace: string, name: string, scope?: PodCallScope): PodCallGraph;
  /** Calls delegated by `id` (host-local under bridge…), oldest first. */
  childrenOf(id: string): StoredCallSummary[];
  countCalls(): number;
  /** What a container id (or a prefix of one, as the CLI prints it) names. */
  resolveContainerId(prefix: string): ContainerIdMatch;
  /** For the failed calls among `ids` (others are absent): what their error is, to show on their line. */
  failureTexts(ids: readonly string[]): Map<string, FailureText>;
  /** Size of the main database file's pages (not counting the WAL). */
  databaseSizeBytes(): number;
  close(): void;
}

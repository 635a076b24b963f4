/**
 * What the collector publishes: CNI plugin calls as they start and finish.
 * Times are microseconds since the Unix epoch; durations microseconds.
 */

import type { CaptureMode } from '../bpf/index.js';

export type CniCommand = 'ADD' | 'DEL' | 'CHECK' | 'VERSION' | 'GC' | 'STATUS' | (string & {});

/** Bytes a process moved through one of its standard streams, in order. */
/**
 * Why a call cannot vouch for its bytes: the tracer dropped records while it
 * ran (`tracer-lost`), the tracer supplying its payloads stopped (a mode
 * switch, a crash) or never sent an exit's copy (`payload-tracer-cut`),
 * payload records its exits announced never came (`payloads-never-came`), or
 * more of its records came ahead of its exec than are kept (`early-overflow`),
 * or its plugin's exec came after its own (another CPU's buffer read late)
 * and a helper was taken for a call (`out-of-order`).
 */
export const LOST_RECORDS_CAUSES = ['tracer-lost', 'payload-tracer-cut', 'payloads-never-came', 'early-overflow', 'out-of-order'] as const;
export type LostRecordsCause = (typeof LOST_RECORDS_CAUSES)[number];

export interface CapturedStream {
  /** The bytes captured, exactly as read or written. */
  readonly bytes: Buffer;
  /** Bytes the syscalls moved in all: more than `bytes.length` when something was cut. */
  readonly totalBytes: number;
  /** Some bytes are missing: a syscall above the capture cap, or records lost by the tracer. */
  readonly truncated: boolean;
  /**
   * Set when secret values inside these (JSON) bytes were replaced by a marker
   * before publishing: the JSON pointers of those values. The original bytes
   * are gone; absent when nothing was redacted.
   */
  readonly redactions?: readonly string[];
}

export interface PodRef {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string | null;
  readonly infraContainerId: string | null;
}

/** How a process ended. `exitCode` is set for a normal exit, `signal` for a kill. */
export interface ProcessOutcome {
  readonly exitCode: number | null;
  readonly signal: number | null;
  readonly coreDumped: boolean;
}

/** A non-plugin program run on behalf of a call (iptables, ip, tc, jq, cat…). */
export interface HelperProcess {
  readonly pid: number;
  readonly ppid: number;
  readonly path: string;
  readonly argv: readonly string[];
  readonly startedAtUs: number;
  readonly endedAtUs: number | null;
  readonly outcome: ProcessOutcome | null;
  /** What the helper wrote to its own stdout/stderr when those were not the plugin's. */
  readonly stdout: CapturedStream;
  readonly stderr: CapturedStream;
}

/** What a kind of kernel object a change touched (others as decoders come). */
export type KernelObject = 'link' | 'address' | 'route' | 'neighbour' | 'rule' | 'qdisc' | 'filter' | 'sysctl' | 'iptables' | 'nftables';

/**
 * One change a call's process tree made to the kernel (full capture): a
 * netlink request, a sysctl write, an iptables helper's argv.
 */
export interface KernelChange {
  /** When it was asked (Unix epoch µs). */
  readonly atUs: number;
  readonly pid: number;
  /** `host`, the call's CNI_NETNS path, or `netns:[<inode>]`: where the change was made. */
  readonly netns: string;
  readonly object: KernelObject;
  readonly action: 'add' | 'delete' | 'change';
  /** One line as `ip`, `sysctl` or `iptables` would say it: `10.96.7.2/24 dev eth0`. */
  readonly subject: string;
  /** The kernel's answer: true, false (refused), null when no answer was seen (not asked for, or not taken). */
  readonly ok: boolean | null;
  readonly error: { readonly errno: string; readonly message: string | null } | null;
  /** Decoded details (interface index, table, kind…), as text. */
  readonly attributes?: Readonly<Record<string, string>>;
}

/** A message the kernel raised (netlink extack) for a request of the call's process tree. */
export interface KernelMessage {
  readonly atUs: number;
  readonly pid: number;
  /** The plugin or helper that asked (its binary's name). */
  readonly process: string;
  readonly message: string;
}

export type CallStatus = 'running' | 'finished' | 'incomplete';

/** The runtime (or other untraced process) that exec'd a top-level plugin. */
export interface ParentProcess {
  readonly pid: number;
  readonly comm: string | null;
  readonly exe: string | null;
}

export interface CniCall {
  readonly id: string;
  readonly pid: number;
  /** The plugin process's start time (kernel monotonic ns): with pid, names the process across pid reuse. */
  readonly processStart: string;
  readonly ppid: number;
  /** Delegating call (bridge for its host-local), null for a call made by a runtime. */
  readonly parentId: string | null;
  readonly parentProcess: ParentProcess | null;
  readonly path: string;
  /** The binary's name: `bridge`, `host-local`… */
  readonly plugin: string;
  readonly argv: readonly string[];
  /** CNI_* and trace-context variables only; nothing else of the environment is kept. */
  readonly env: Readonly<Record<string, string>>;
  readonly command: CniCommand | null;
  readonly containerId: string | null;
  readonly netns: string | null;
  readonly ifname: string | null;
  readonly cniArgs: string | null;
  readonly pod: PodRef | null;
  readonly traceParent: string | null;
  readonly isVersionProbe: boolean;
  readonly startedAtUs: number;
  readonly endedAtUs: number | null;
  readonly durationUs: number | null;
  readonly outcome: ProcessOutcome | null;
  readonly status: CallStatus;
  /** Why a call is `incomplete`: its exit was never seen, records were lost… */
  readonly incompleteReason: string | null;
  readonly captureMode: CaptureMode;
  /** The tracer reported lost records while this call ran: some of its bytes or helpers may be missing. */
  readonly lostRecords: boolean;
  /** Why lostRecords is set (the first cause); null when it is not, or for calls stored before causes were kept. */
  readonly lostRecordsCause: LostRecordsCause | null;
  /**
   * The plugin's stdout and stderr were one open file (a terminal, `2>&1`
   * into one pipe) and some write to it could not be told apart: it went
   * through an fd that stood for neither (written as stdout). Writes through
   * an fd that stands for stdout or stderr (1 and 2, and their copies, as a
   * shell's `>&2` makes them) are filed as such, and do not set it.
   */
  readonly stdioShared: boolean;
  /**
   * Reads/writes on the call's stdin/stdout/stderr whose bytes full mode did
   * not take (sendfile, splice, copy_file_range, sendmsg, iovecs past the 2nd…): the stream is marked
   * truncated.
   */
  readonly uncapturedIo: number;
  readonly stdin: CapturedStream;
  readonly stdout: CapturedStream;
  readonly stderr: CapturedStream;
  readonly helpers: readonly HelperProcess[];
  /**
   * What the call's process tree changed in the kernel, in order (its
   * delegates' changes are in their own calls, its helpers' in this one);
   * null when its capture did not take them (light mode), [] when it took
   * them and nothing changed. Absent: calls of older versions (null).
   */
  readonly changes?: readonly KernelChange[] | null;
  /** The kernel's own error texts for the tree's requests (every mode). Absent: none. */
  readonly kernelMessages?: readonly KernelMessage[];
  /**
   * Every image the plugin process ran, in order: a wrapper that exec'd the
   * real plugin in place (`exec /opt/cni/bin/real "$@"`), then that plugin.
   * The call is named after the last image that is a CNI plugin (in
   * CNI_PATH). Absent (calls from older tracers): just `path`.
   */
  readonly execChain?: readonly string[];
  /**
   * A CNI_* or trace-context entry of the plugin's environment was cut (longer
   * than the tracer's 16 KiB an entry, more of them than it sends) or its
   * chunks were lost, or argv was. From tracers before the entries were sent
   * apart: the exec's argv + environment block was longer than 16 KiB or part
   * of it was lost. Absent: false.
   */
  readonly envTruncated?: boolean;
  /** The executable's path was longer than the tracer reads: `path` is its beginning. Absent: false. */
  readonly pathTruncated?: boolean;
  /**
   * Where in `stdout` / `stderr` the bytes begin that the plugin's
   * descendants wrote after the plugin exited (the caller still received
   * them); null or absent when there were none.
   */
  readonly stdoutAfterExitOffset?: number | null;
  readonly stderrAfterExitOffset?: number | null;
  /**
   * The CNI network the call was about: `name` from its stdin when captured,
   * else its parent's, else the network whose active conf lists this plugin
   * type. Not set by the assembler: the store's edge fills it in
   * (store/network/heartbeat-sieve.ts); absent or null when unknown.
   */
  readonly network?: string | null;
  /**
   * A DEL that libcni's GC ran first, for a cached attachment missing from
   * `cni.dev/valid-attachments`: set by the store when the GC is recorded. Absent: false.
   */
  readonly gcDriven?: boolean;
}

/**
 * What happened to a call. `call.updated` is a call already sent as
 * `call.finished` that changed afterwards (descendants that outlived the
 * plugin wrote more, or ended later): the whole call again, never a
 * second finish, so no client has to tell a repeat from a first finish.
 */
export type CollectorEvent =
  | { readonly type: 'call.started'; readonly call: CniCall }
  | { readonly type: 'call.finished'; readonly call: CniCall }
  | { readonly type: 'call.updated'; readonly call: CniCall };

/** The port through which store and live tail receive calls (see publisher.ts). */
export interface CallListener {
  onEvents(events: readonly CollectorEvent[]): void;
}

export function callSucceeded(call: Pick<CniCall, 'outcome'>): boolean {
  return call.outcome !== null && call.outcome.exitCode === 0 && call.outcome.signal === null;
}

/**
 * A stretch of time when no tracer recorded (bpftrace crashed or was killed
 * and is being restarted): calls that started then were not seen, and calls
 * in flight when it went away end as `incomplete`. Published when the gap
 * opens (`endedAtUs` null) and again when a new tracer records.
 */
export interface TracerGap {
  readonly startedAtUs: number;
  readonly endedAtUs: number | null;
  /** Why the tracer went away, in bpftrace's words where it gave any. */
  readonly reason: string;
  /** Calls in flight when it went away: published as incomplete, never dropped. */
  readonly incompleteCalls: number;
}

export type TracerEvent = { readonly type: 'tracer.gap'; readonly gap: TracerGap };

/** The port through which the daemon (stored tracer events) and the live tail hear about the tracer itself. */
export interface TracerEventListener {
  onTracerEvent(event: TracerEvent): void;
}

/** CNI STATUS readiness as the store keeps it: per network and plugin, per network, and its transitions. */

/** A CNI error as a plugin prints it on stdout (`code`, `msg`, `details`); null fields when not captured. */
export interface CniErrorAnswer {
  readonly code: number | null;
  readonly msg: string | null;
  readonly details: string | null;
}

/** Counts per latency bucket (READINESS_BUCKETS_MS, then one for longer), their sum and the longest. */
export interface LatencyTally {
  readonly buckets: readonly number[];
  readonly sumUs: number;
  readonly maxUs: number;
}

/** One plugin of one network, as its STATUS answers left it. */
export interface PluginReadiness {
  /** null: the network is not known (no stdin captured, no conf lists the plugin). */
  readonly network: string | null;
  readonly plugin: string;
  readonly ready: boolean;
  /** Since when it answers this way. */
  readonly sinceMs: number;
  readonly lastCheckedMs: number;
  readonly checks: number;
  readonly failures: number;
  /** The last failing answer's CNI error; null while ready. */
  readonly error: CniErrorAnswer | null;
  readonly exitCode: number | null;
  /** The last call kept whole. */
  readonly lastCallId: string | null;
  readonly latency: LatencyTally;
}

/** A STATUS call, as much of it as readiness needs. */
export interface StatusCheck {
  readonly callId: string;
  readonly network: string | null;
  readonly plugin: string;
  /** When it ended (ms since the epoch). */
  readonly atMs: number;
  /** Exit 0, no signal. */
  readonly ok: boolean;
  readonly durationUs: number | null;
  readonly exitCode: number | null;
  readonly signal: number | null;
  /** The CNI error on stdout; null when stdout was not captured (light mode) or is no CNI error. */
  readonly answer: CniErrorAnswer | null;
}

/** A network's readiness changed, or its first answer came. */
export interface ReadinessTransition {
  readonly id: number;
  readonly network: string | null;
  readonly atMs: number;
  readonly ready: boolean;
  /** The plugin whose answer made the change. */
  readonly plugin: string;
  readonly errorCode: number | null;
  readonly errorMsg: string | null;
  readonly callId: string | null;
}

/** A network's readiness: every plugin of it that was asked. */
export interface NetworkReadiness {
  readonly network: string | null;
  /** Ready when every plugin's last answer was; null when none was asked. */
  readonly ready: boolean | null;
  readonly sinceMs: number | null;
  readonly lastCheckedMs: number | null;
  /** The first plugin (by name) whose last answer failed; null while ready. */
  readonly failing: PluginReadiness | null;
  readonly checks: number;
  readonly plugins: readonly PluginReadiness[];
  readonly latency: LatencyTally;
  /** Newest first. */
  readonly transitions: readonly ReadinessTransition[];
}

/** What the readiness side publishes: each check (for metrics) and each change of a network (for the tail). */
export type ReadinessEvent =
  | { readonly type: 'check'; readonly network: string | null; readonly plugin: string; readonly ok: boolean; readonly durationUs: number | null }
  | { readonly type: 'change'; readonly readiness: NetworkReadiness };

export interface ReadinessListener {
  onReadiness(event: ReadinessEvent): void;
}

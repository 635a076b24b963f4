/**
 * How times, durations and ids read on the page. Pure: the browser's zone comes in as an offset, so the
 * same text can be checked in tests whatever zone they run in.
 */

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** The browser's offset east of UTC (minutes) at that instant. */
export function browserOffsetMinutes(iso: string): number {
  return -new Date(iso).getTimezoneOffset();
}

/** `2026-11-26 14:03:05.123` in the zone `offsetMinutes` east of UTC; the input as is when it is not a time. */
export function localTime(iso: string, offsetMinutes: number): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  const d = new Date(ms + offsetMinutes * 60_000);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}`;
}

/** Only the time of day (lists, where the date is mostly today's). */
export function localClock(iso: string, offsetMinutes: number): string {
  return localTime(iso, offsetMinutes).slice(11);
}

/** The hover text: the same instant in UTC. */
export function utcTitle(iso: string): string {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? iso : `${new Date(ms).toISOString()} (UTC)`;
}

/** Milliseconds, with the precision a reader can use: `0.42 ms`, `12.3 ms`, `1,234 ms`; `—` when unknown. */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 10) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${ms.toFixed(1)} ms`;
  return `${Math.round(ms).toLocaleString('en-US')} ms`;
}

/** The 12 characters `cnirec` and runtimes print of a container id; the full id goes in a title. */
export function shortId(id: string | null | undefined): string {
  if (!id) return '—';
  return id.length > 12 ? id.slice(0, 12) : id;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}

/** What a process's end says, in a few words. */
export interface Outcome {
  readonly text: string;
  readonly tone: 'ok' | 'failed' | 'running' | 'incomplete';
}

export function outcomeOf(run: {
  readonly status?: 'running' | 'finished' | 'incomplete';
  readonly exitCode: number | null;
  readonly signal: number | null;
  readonly endedAt: string | null;
}): Outcome {
  if (run.status === 'incomplete') return { text: 'incomplete', tone: 'incomplete' };
  if (run.signal !== null) return { text: `signal ${run.signal}`, tone: 'failed' };
  if (run.exitCode !== null) return { text: `exit ${run.exitCode}`, tone: run.exitCode === 0 ? 'ok' : 'failed' };
  if (run.status === 'running' || run.endedAt === null) return { text: 'running', tone: 'running' };
  return { text: 'ended', tone: 'incomplete' };
}

/** `namespace/name`, or `—` for a call without pod arguments. */
export function podText(pod: { readonly namespace: string | null; readonly name: string } | null): string {
  if (!pod) return '—';
  return pod.namespace ? `${pod.namespace}/${pod.name}` : pod.name;
}

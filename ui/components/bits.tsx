/** Small pieces every page uses: times, durations, outcomes, ids. All recorded text goes in as text. */

import type { ComponentChildren } from 'preact';
import { browserOffsetMinutes, formatMs, localClock, localTime, outcomeOf, shortId, utcTitle, type Outcome as OutcomeText } from '../model/format.js';

/** A time in the browser's zone, the UTC instant on hover. */
export function Time({ iso, clock = false }: { iso: string | null | undefined; clock?: boolean }) {
  if (!iso) return <span class="muted">—</span>;
  const offset = browserOffsetMinutes(iso);
  return (
    <time dateTime={iso} title={utcTitle(iso)}>
      {clock ? localClock(iso, offset) : localTime(iso, offset)}
    </time>
  );
}

export function Duration({ ms }: { ms: number | null | undefined }) {
  return <span class="num">{formatMs(ms)}</span>;
}

export function Outcome({ run }: { run: Parameters<typeof outcomeOf>[0] }) {
  return <OutcomeBadge outcome={outcomeOf(run)} />;
}

export function OutcomeBadge({ outcome }: { outcome: OutcomeText }) {
  return <span class={`badge ${outcome.tone}`}>{outcome.text}</span>;
}

/** A container id cut to 12 characters, the whole id in a title. */
export function ShortId({ id }: { id: string | null | undefined }) {
  return id ? (
    <code title={id} class="id">
      {shortId(id)}
    </code>
  ) : (
    <span class="muted">—</span>
  );
}

export function Loading() {
  return <p class="muted">Loading…</p>;
}

export function ErrorNote({ error }: { error: unknown }) {
  return <p class="error-note">{error instanceof Error ? error.message : String(error)}</p>;
}

export function Section({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <section class="panel">
      <h2>{title}</h2>
      {children}
    </section>
  );
}

/** Rows of label and value. */
export function Facts({ rows }: { rows: readonly (readonly [string, ComponentChildren] | null | false)[] }) {
  return (
    <dl class="facts">
      {rows.filter((r): r is readonly [string, ComponentChildren] => Boolean(r)).map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** The columns of a list of calls (the calls page, the live tail): one header for both. */
export function CallTableHead() {
  return (
    <thead>
      <tr>
        <th>Started</th>
        <th>Command</th>
        <th>Plugin</th>
        <th>Pod</th>
        <th>Container</th>
        <th>Duration</th>
        <th>Outcome</th>
        <th>Error</th>
      </tr>
    </thead>
  );
}

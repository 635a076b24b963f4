/** The node's recorder: tracer state and capture mode (switchable), losses and gaps, the database, retention and export. */

import { useEffect, useState } from 'preact/hooks';
import { ApiRequestError, getJson, putJson } from '../client/client.js';
import type { Health, ReadinessList, RuntimeStatusBody, TracerStatus } from '../client/types.js';
import { ReadinessTable } from '../components/readiness.js';
import { RuntimeSection } from '../components/runtime.js';
import { ErrorNote, Facts, Loading, Section, Time } from '../components/bits.js';
import { useLoad } from '../components/hooks.js';
import { formatBytes, formatMs } from '../model/format.js';

const REFRESH_MS = 5000;

export function StatusPage() {
  const [round, setRound] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setRound((r) => r + 1), REFRESH_MS);
    return () => clearInterval(timer);
  }, []);
  const loaded = useLoad(String(round), async (signal) => {
    const [health, tracer, readiness, runtime] = await Promise.all([
      getJson<Health>('/healthz', signal),
      getJson<TracerStatus>('/api/v1/tracer', signal),
      // A daemon that does not follow CNI STATUS answers 501: the section says so.
      getJson<ReadinessList>('/api/v1/node/cni/status', signal).catch((err: unknown) => {
        if (err instanceof ApiRequestError && err.status === 501) return null;
        throw err;
      }),
      getJson<RuntimeStatusBody>('/api/v1/node/runtime', signal).catch((err: unknown) => {
        if (err instanceof ApiRequestError && err.status === 501) return null;
        throw err;
      }),
    ]);
    return { health, tracer, readiness, runtime };
  });
  const [switching, setSwitching] = useState<string | null>(null);
  const [data, setData] = useState<{ health: Health; tracer: TracerStatus; readiness: ReadinessList | null; runtime: RuntimeStatusBody | null } | null>(null);
  // Keep the last answer on screen while the next loads.
  useEffect(() => {
    if (loaded.data) setData(loaded.data);
  }, [loaded.data]);

  if (!data) return loaded.error ? <ErrorNote error={loaded.error} /> : <Loading />;
  const { health, tracer, readiness, runtime } = data;
  const capture = tracer.capture;
  const setting = capture?.setting ?? tracer.mode;
  const switchMode = async (mode: 'auto' | 'full' | 'light') => {
    setSwitching(`Switching to ${mode}…`);
    try {
      await putJson('/api/v1/tracer/mode', { mode });
      setSwitching(null);
      setRound((r) => r + 1);
    } catch (err) {
      setSwitching(err instanceof Error ? err.message : String(err));
    }
  };
  const retention = health.retention;
  const otel = health.otel as (Record<string, unknown> & { failingSince: string | null; backlog: number }) | null;
  return (
    <div class="page status-page">
      <h1>
        Node status <span class={`badge ${health.status === 'ok' ? 'ok' : 'failed'}`}>{health.status}</span>
      </h1>
      {health.problems.length > 0 && (
        <ul class="problems">
          {health.problems.map((p) => (
            <li key={p} class="error-note">
              {p}
            </li>
          ))}
        </ul>
      )}
      <Section title="Tracer">
        <Facts
          rows={[
            ['State', tracer.ready ? 'recording' : tracer.running ? 'starting' : 'stopped'],
            [
              'Capture mode',
              <span class="mode">
                <strong data-mode={tracer.mode}>{tracer.mode}</strong>{' '}
                {capture && capture.setting !== capture.mode && <span class="muted">({capture.setting}) </span>}
                {tracer.modeSwitchable &&
                  (capture ? (['auto', 'full', 'light'] as const) : (['full', 'light'] as const))
                    .filter((m) => m !== setting)
                    .map((m) => (
                      <button type="button" key={m} disabled={switching !== null && switching.endsWith('…')} onClick={() => void switchMode(m)}>
                        Switch to {m}
                      </button>
                    ))}
                {switching && <span class="muted"> {switching}</span>}
              </span>,
            ],
            capture && ['Why', `${capture.reason}${capture.scope ? ` (payloads kept for ${capture.scope.pod === null ? `namespace ${capture.scope.namespace}` : `${capture.scope.namespace}/${capture.scope.pod}`} only)` : ''}`],
            capture?.until ? ['Until', <Time iso={capture.until} />] : null,
            capture?.lastError ? ['Switch failing', <span class="error-text">{capture.lastError}</span>] : null,
            tracer.payloadPath !== null && ['Payload probes', tracer.payloadPath === 'syscall-exit' ? 'at syscall exit (what was delivered)' : 'at syscall entry (the fallback: what was attempted)'],
            ['bpftrace pid', tracer.pid === null ? '—' : String(tracer.pid)],
            tracer.standby && ['Standby tracer', tracer.standby.running ? `pid ${tracer.standby.pid ?? '?'}, ${tracer.standby.rssBytes === null ? '?' : formatBytes(tracer.standby.rssBytes)} resident, ${tracer.standby.restarts} restarts` : 'not running'],
            ['Started', <Time iso={tracer.startedAt} />],
            ['Last record', <Time iso={tracer.lastRecordAt} />],
            ['Restarts', String(tracer.restarts)],
            ['Lost records', `${tracer.lostEvents} (${health.tracer.recentLostEvents} in the last ${formatMs(health.tracer.lostEventsWindowMs)})`],
            ['Malformed lines', String(tracer.malformedLines)],
            ['Gaps', `${tracer.gaps}, ${tracer.gapSeconds.toFixed(1)} s without recording`],
            tracer.lastGap && [
              'Last gap',
              <span>
                <Time iso={tracer.lastGap.startedAt} /> → {tracer.lastGap.endedAt ? <Time iso={tracer.lastGap.endedAt} /> : 'now'}: {tracer.lastGap.reason} (
                {tracer.lastGap.incompleteCalls} calls incomplete)
              </span>,
            ],
            ['Arrival lag', formatMs(tracer.arrivalLagMs)],
            tracer.lastError !== null && ['Last error', <span class="error-text">{tracer.lastError}</span>],
          ]}
        />
      </Section>
      <Section title="Container runtime (CRI)">
        {runtime ? <RuntimeSection runtime={runtime} /> : <p class="muted">This daemon does not ask the container runtime.</p>}
      </Section>
      <Section title="CNI networks (STATUS)">
        {readiness ? <ReadinessTable items={readiness.items} /> : <p class="muted">This daemon does not follow CNI STATUS.</p>}
      </Section>
      <Section title="Calls">
        <Facts
          rows={[
            ['Running now', String(health.calls.openCalls)],
            ['Oldest running', formatMs(health.calls.oldestRunningAgeMs)],
            ['Started / finished', `${health.calls.callsStarted} / ${health.calls.callsFinished}`],
          ]}
        />
      </Section>
      <Section title="Database">
        <Facts
          rows={[
            ['Size', formatBytes(health.store.databaseBytes)],
            ['Writable', health.store.writable ? 'yes' : `no, since ${health.store.failingSince ?? '?'}: ${health.store.lastError ?? ''}`],
            ['Pending / dropped writes', `${health.store.pendingWrites} / ${health.store.droppedWrites}`],
            [
              'Retention',
              retention
                ? retention.enabled
                  ? `calls older than ${formatMs(retention.maxAgeMs)} or beyond ${formatBytes(retention.maxDbBytes)}; last run ${retention.lastRunAgeMs === null ? 'not yet' : `${formatMs(retention.lastRunAgeMs)} ago`}`
                  : 'off'
                : 'none',
            ],
          ]}
        />
      </Section>
      {health.cache && (
        <Section title="libcni cache watcher">
          <Facts
            rows={[
              ['Watching', `${health.cache.watchedDirs} directories, ${health.cache.entries} entries`],
              ['Problems', String(health.cache.problems)],
              ['Open findings', Object.entries(health.cache.openFindings).map(([k, n]) => `${k}: ${n}`).join(', ') || 'none'],
            ]}
          />
        </Section>
      )}
      <Section title="OpenTelemetry export">
        {otel ? (
          <Facts
            rows={[
              ['State', otel.failingSince ? `failing since ${otel.failingSince}` : 'exporting'],
              ['Backlog', String(otel.backlog)],
              ...Object.entries(otel)
                .filter(([k, v]) => k !== 'failingSince' && k !== 'backlog' && (typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean'))
                .map(([k, v]) => [k, String(v)] as const),
            ]}
          />
        ) : (
          <p class="muted">Not exporting (no --otlp-endpoint).</p>
        )}
      </Section>
    </div>
  );
}

/** CNI STATUS readiness per network (GET /api/v1/node/cni/status), for the node status page. */

import type { NetworkReadinessView } from '../client/types.js';
import { callPath } from '../model/query.js';
import { Time } from './bits.js';

const ms = (v: number | null) => (v === null ? '—' : `${v < 10 ? v.toFixed(1) : Math.round(v)} ms`);

function errorText(e: NetworkReadinessView['error']): string {
  if (e === null) return '';
  const code = e.code === null ? 'error' : `error ${e.code}`;
  return e.msg === null ? `${code} (its message comes with the next check captured with payloads)` : `${code}: ${e.msg}`;
}

export function ReadinessTable({ items }: { items: readonly NetworkReadinessView[] }) {
  if (items.length === 0) return <p class="muted">No CNI STATUS recorded yet (runtimes ask it of 1.1.0 networks, containerd 2.0.1 and later).</p>;
  return (
    <div class="readiness">
      {items.map((n) => (
        <div class="network-readiness" key={n.network ?? ''} data-network={n.network ?? ''} data-ready={String(n.ready)}>
          <h3>
            {n.network ?? <span class="muted">(network not known)</span>}{' '}
            <span class={`badge ${n.ready === false ? 'failed' : n.ready ? 'ok' : ''}`}>{n.ready === null ? 'never asked' : n.ready ? 'ready' : 'not ready'}</span>
          </h3>
          <p>
            {n.ready === false && n.plugin !== null && (
              <span class="error-text">
                {n.plugin}: {errorText(n.error)}.{' '}
              </span>
            )}
            Since <Time iso={n.since} />; last checked <Time iso={n.lastCheckedAt} />; {n.checks} checks; latency p50 {ms(n.latency.p50Ms)}, p99 {ms(n.latency.p99Ms)}, max {ms(n.latency.maxMs)}.
          </p>
          {n.transitions.length > 0 && (
            <table class="transitions">
              <thead>
                <tr>
                  <th>At</th>
                  <th>Became</th>
                  <th>Plugin</th>
                  <th>Error</th>
                  <th>Call</th>
                </tr>
              </thead>
              <tbody>
                {n.transitions.map((t) => (
                  <tr key={`${t.at}-${t.callId ?? ''}`}>
                    <td>
                      <Time iso={t.at} />
                    </td>
                    <td>{t.ready ? 'ready' : 'not ready'}</td>
                    <td>{t.plugin}</td>
                    <td>{t.ready ? '' : errorText({ code: t.code, msg: t.msg, details: null })}</td>
                    <td>{t.callId ? <a href={callPath(t.callId)}>the call</a> : '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      ))}
    </div>
  );
}

/** The container runtime's side (CRI): its readiness for the status page, a sandbox's state for the pod page. */

import type { RuntimeStatusBody, SandboxRuntime } from '../client/types.js';
import { Time } from './bits.js';

export function RuntimeSection({ runtime }: { runtime: RuntimeStatusBody }) {
  if (runtime.errorKind === 'off') return <p class="muted">The runtime is not asked (--cri-endpoint none).</p>;
  const notReady = runtime.reachable && runtime.conditions.some((c) => c.type === 'NetworkReady' && !c.status);
  // From an opened bundle: as recorded on its node when it was taken, never about this machine.
  const recorded = runtime.recorded;
  return (
    <div class="runtime" data-reachable={String(runtime.reachable)} data-network-ready={String(!notReady)} data-recorded={recorded?.from ?? 'live'}>
      <h3>
        {runtime.name ? `${runtime.name} ${runtime.version ?? ''}` : 'Container runtime'}{' '}
        <span class={`badge ${!runtime.reachable || notReady ? 'failed' : 'ok'}`}>{!runtime.reachable ? (recorded ? 'could not be asked' : 'cannot be asked') : notReady ? 'network not ready' : 'ready'}</span>
      </h3>
      {recorded && <p class="muted recorded-note">{recorded.note}</p>}
      <p>
        {runtime.endpoint ?? 'no socket found'}; last asked <Time iso={runtime.lastCheckedAt} />
        {runtime.error && <span class="error-text">. {runtime.error}</span>}
      </p>
      {notReady &&
        (recorded ? (
          <p class="error-text">NetworkReady was false: the kubelet reported the node NotReady and no new pod got a network.</p>
        ) : (
          <p class="error-text">NetworkReady is false: the kubelet reports the node NotReady and no new pod gets a network.</p>
        ))}
      {runtime.conditions.length > 0 && (
        <table class="conditions">
          <thead>
            <tr>
              <th>Condition</th>
              <th>Status</th>
              <th>Since</th>
              <th>Reason and message</th>
            </tr>
          </thead>
          <tbody>
            {runtime.conditions.map((c) => (
              <tr key={c.type} data-condition={c.type} data-status={String(c.status)}>
                <td>{c.type}</td>
                <td class={c.status ? '' : 'error-text'}>{String(c.status)}</td>
                <td>
                  <Time iso={c.since} />
                </td>
                <td>{[c.reason, c.message].filter((x) => x !== '').join(': ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p class="muted">
        Leaks: {runtime.leaks.judging ? `${runtime.leaks.confirmed} confirmed, ${runtime.leaks.suspected} waiting for a second look` : `not judged (${runtime.leaks.why ?? '?'})`}
      </p>
      {runtime.transitions.length > 0 && (
        <table class="transitions">
          <thead>
            <tr>
              <th>At</th>
              <th>Condition</th>
              <th>Became</th>
              <th>Reason and message</th>
            </tr>
          </thead>
          <tbody>
            {runtime.transitions.map((t, i) => (
              <tr key={`${t.at}-${t.type}-${i}`}>
                <td>
                  <Time iso={t.at} />
                </td>
                <td>{t.type}</td>
                <td>{String(t.status)}</td>
                <td>{[t.reason, t.message].filter((x) => x !== '').join(': ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

export function SandboxRuntimeLine({ runtime }: { runtime: SandboxRuntime }) {
  const ips = [runtime.ip, ...runtime.additionalIps].filter((ip) => ip !== null).join(', ') || 'no IP';
  return (
    <p class="sandbox-runtime" data-state={runtime.goneAt ? 'gone' : runtime.state}>
      Runtime:{' '}
      {runtime.goneAt ? (
        <span class="error-text">
          gone since <Time iso={runtime.goneAt} /> (last known: {runtime.state})
        </span>
      ) : (
        <strong>{runtime.state === 'ready' ? 'ready' : 'not ready'}</strong>
      )}
      , {ips}, created <Time iso={runtime.createdAt} />
      {runtime.attempt > 0 && `, attempt ${runtime.attempt}`} <span class="muted">(seen <Time iso={runtime.seenAt} />)</span>
    </p>
  );
}

/** Recorded calls, newest first, filtered as GET /api/v1/calls is, a page at a time. */

import { useLocation } from 'preact-iso';
import { getJson } from '../client/client.js';
import type { CallPage } from '../client/types.js';
import { CallTableHead, Duration, ErrorNote, Loading, Outcome, ShortId, Time } from '../components/bits.js';
import { CALL_FILTER_SPECS, FilterForm } from '../components/filter-form.js';
import { useListKeys, useLoad } from '../components/hooks.js';
import { podText } from '../model/format.js';
import { CALL_FIELDS, callPath, filterFromQuery, podPath, queryString } from '../model/query.js';

export function CallsPage() {
  const { query, route } = useLocation();
  const filter = filterFromQuery(CALL_FIELDS, query);
  const qs = queryString(CALL_FIELDS, filter);
  const loaded = useLoad(qs, (signal) => getJson<CallPage>(`/api/v1/calls${qs}${qs ? '&' : '?'}limit=50`, signal));
  const items = loaded.data?.items ?? [];
  const selected = useListKeys(items.length, (i) => items[i] && route(callPath(items[i].id)));
  const { cursor: _cursor, ...withoutCursor } = filter;
  return (
    <div class="page calls-page">
      <h1>Calls</h1>
      <FilterForm
        path="/ui/calls"
        fields={CALL_FIELDS}
        value={filter}
        specs={[
          ...CALL_FILTER_SPECS,
          { name: 'network', label: 'Network' },
          { name: 'minDurationMs', label: 'Slower than (ms)', placeholder: '100' },
          { name: 'since', label: 'Since', placeholder: '2026-11-26T10:00:00Z or 1h' },
          { name: 'until', label: 'Until', placeholder: 'ISO time' },
          { name: 'status', label: 'Status', options: [['', 'any'], ['running', 'running'], ['finished', 'finished'], ['incomplete', 'incomplete']] },
        ]}
      />
      {loaded.loading && <Loading />}
      {loaded.error ? <ErrorNote error={loaded.error} /> : null}
      {!loaded.loading && !loaded.error && (
        <>
          <table class="list">
            <CallTableHead />
            <tbody>
              {items.map((c, i) => (
                <tr key={c.id} data-row={i} data-call-id={c.id} class={`call-row${c.ok === false ? ' failed' : ''}${i === selected ? ' selected' : ''}`}>
                  <td>
                    <Time iso={c.startedAt} />
                  </td>
                  <td>{c.command ?? '—'}</td>
                  <td>
                    <a href={callPath(c.id)}>{c.plugin}</a>
                  </td>
                  <td>{c.pod ? <a href={podPath(c.pod.namespace, c.pod.name)}>{podText(c.pod)}</a> : '—'}</td>
                  <td>
                    <ShortId id={c.containerId} />
                  </td>
                  <td>
                    <Duration ms={c.durationMs} />
                  </td>
                  <td>
                    <Outcome run={c} />
                  </td>
                  <td class="error-cell">{c.error ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {items.length === 0 && <p class="muted">No call matches.</p>}
          <p class="pager">
            {filter.cursor && <a href={`/ui/calls${queryString(CALL_FIELDS, withoutCursor)}`}>Newest</a>}{' '}
            {loaded.data?.nextCursor && <a href={`/ui/calls${queryString(CALL_FIELDS, { ...filter, cursor: loaded.data.nextCursor })}`}>Older →</a>}
          </p>
        </>
      )}
    </div>
  );
}

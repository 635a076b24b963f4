/** Open findings (loops, leaked IPs, broken cache files…), worst first, grouped by kind with counts. */

import { useLocation } from 'preact-iso';
import { getJson } from '../client/client.js';
import type { Finding, FindingPage } from '../client/types.js';
import { ErrorNote, Loading, ShortId, Time } from '../components/bits.js';
import { FilterForm } from '../components/filter-form.js';
import { useLoad } from '../components/hooks.js';
import { groupFindings } from '../model/findings.js';
import { podText } from '../model/format.js';
import { callPath, filterFromQuery, FINDING_FIELDS, podPath, queryString } from '../model/query.js';

export function FindingsPage() {
  const { query } = useLocation();
  const filter = filterFromQuery(FINDING_FIELDS, query);
  const qs = queryString(FINDING_FIELDS, filter);
  const loaded = useLoad(qs, (signal) => getJson<FindingPage>(`/api/v1/findings${qs}`, signal));
  const { cursor: _cursor, ...withoutCursor } = filter;
  return (
    <div class="page findings-page">
      <h1>Findings</h1>
      <FilterForm
        path="/ui/findings"
        fields={FINDING_FIELDS}
        value={filter}
        specs={[
          { name: 'severity', label: 'Severity', options: [['', 'any'], ['critical', 'critical'], ['warning', 'warning'], ['info', 'info']] },
          { name: 'pod', label: 'Pod', placeholder: 'namespace/name' },
          { name: 'includeResolved', label: 'Resolved', options: [['', 'open only'], ['true', 'include resolved']] },
        ]}
      />
      {loaded.loading && <Loading />}
      {loaded.error ? <ErrorNote error={loaded.error} /> : null}
      {loaded.data && (
        <>
          <p class="muted">{loaded.data.total === 0 ? 'Nothing found: no loop, leak or broken cache file.' : `${loaded.data.total} findings`}</p>
          {groupFindings(loaded.data).map((group) => (
            <section class={`panel severity-${group.severity}`} key={group.severity}>
              <h2>
                <span class={`badge sev-${group.severity}`}>{group.severity}</span> {group.count}
              </h2>
              {group.kinds.map((k) => (
                <div key={k.kind} class="kind-group">
                  <h3>
                    {k.kind} <span class="muted">({k.count})</span>
                  </h3>
                  <FindingList items={k.items} />
                </div>
              ))}
            </section>
          ))}
          <p class="pager">
            {filter.cursor && <a href={`/ui/findings${queryString(FINDING_FIELDS, withoutCursor)}`}>First page</a>}{' '}
            {loaded.data.nextCursor && <a href={`/ui/findings${queryString(FINDING_FIELDS, { ...filter, cursor: loaded.data.nextCursor })}`}>Next →</a>}
          </p>
        </>
      )}
    </div>
  );
}

export function FindingList({ items }: { items: readonly Finding[] }) {
  return (
    <ul class="findings">
      {items.map((f) => (
        <li key={f.id} class={`finding sev-${f.severity}`}>
          <div>
            <span class={`badge sev-${f.severity}`}>{f.kind}</span> {f.message}
          </div>
          <div class="muted">
            {f.subject}
            {f.pod && (
              <>
                {' · pod '}
                <a href={podPath(f.pod.namespace ?? '', f.pod.name)}>{podText(f.pod)}</a>
              </>
            )}
            {f.containerId && (
              <>
                {' · container '}
                <ShortId id={f.containerId} />
              </>
            )}
            {f.ip && ` · ${f.ip}`}
            {f.count !== null && ` · ${f.count} times`}
            {' · last seen '}
            <Time iso={f.lastSeen} />
            {f.resolvedAt && (
              <>
                {' · resolved '}
                <Time iso={f.resolvedAt} />
              </>
            )}
            {f.callId && (
              <>
                {' · '}
                <a href={callPath(f.callId)}>the call</a>
              </>
            )}
          </div>
        </li>
      ))}
    </ul>
  );
}

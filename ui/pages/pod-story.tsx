/**
 * A pod's story: one waterfall per sandbox on a shared time axis (the calls the runtime made, what each
 * delegated and the helpers it ran, nested beneath), with the sandbox's cache entries, IPs and findings
 * beside. Reached by namespace/name or a pod UID.
 */

import { useLocation, useRoute } from 'preact-iso';
import { useState } from 'preact/hooks';
import { ApiRequestError, getJson } from '../client/client.js';
import type { CacheEntry, CallPage, PodStory } from '../client/types.js';
import { Duration, ErrorNote, Loading, OutcomeBadge, ShortId, Time } from '../components/bits.js';
import { useListKeys, useLoad } from '../components/hooks.js';
import { FindingList } from './findings.js';
import { DownloadBundle } from '../components/bundle.js';
import { SandboxRuntimeLine } from '../components/runtime.js';
import { formatMs, podText } from '../model/format.js';
import { callPath, parsePodSearch, podPath } from '../model/query.js';
import { axisTicks, layoutWaterfall, type WaterfallRow } from '../model/waterfall.js';

export function PodStoryPage() {
  const { params, query } = useRoute();
  const namespace = params.namespace;
  const name = params.name;
  return (
    <div class="page pod-page">
      <h1>Pod story</h1>
      <PodSearch initial={namespace && name ? `${namespace}/${name}` : ''} />
      {namespace && name ? <Story namespace={namespace} name={name} podUid={query.podUid ?? null} /> : <RecentPods />}
    </div>
  );
}

function PodSearch({ initial }: { initial: string }) {
  const { route } = useLocation();
  const [problem, setProblem] = useState<string | null>(null);
  return (
    <form
      class="filters"
      role="search"
      onSubmit={async (event) => {
        event.preventDefault();
        const text = String(new FormData(event.currentTarget).get('pod') ?? '');
        const search = parsePodSearch(text);
        if (!search) return setProblem('Type namespace/name, or a pod UID.');
        if (search.kind === 'name') return route(podPath(search.namespace, search.name));
        // A UID: its calls say which pod it is.
        try {
          const page = await getJson<CallPage>(`/api/v1/calls?podUid=${encodeURIComponent(search.uid)}&limit=1&includeVersion=true`);
          const pod = page.items[0]?.pod;
          if (!pod) return setProblem(`No call recorded for pod UID ${search.uid}.`);
          setProblem(null);
          route(podPath(pod.namespace, pod.name, search.uid));
        } catch (err) {
          setProblem(err instanceof Error ? err.message : String(err));
        }
      }}
    >
      <label>
        Pod <input name="pod" defaultValue={initial} placeholder="namespace/name or pod UID" size={40} />
      </label>
      <button type="submit">Show</button>
      {problem && <span class="error-note">{problem}</span>}
    </form>
  );
}

/** Without a pod: the pods of the latest calls, to pick from. */
function RecentPods() {
  const loaded = useLoad('recent', (signal) => getJson<CallPage>('/api/v1/calls?limit=500', signal));
  if (loaded.loading) return <Loading />;
  if (loaded.error) return <ErrorNote error={loaded.error} />;
  const pods = new Map<string, { namespace: string; name: string; at: string }>();
  for (const call of loaded.data?.items ?? []) if (call.pod && !pods.has(podText(call.pod))) pods.set(podText(call.pod), { ...call.pod, at: call.startedAt });
  if (pods.size === 0) return <p class="muted">No pod's calls recorded yet.</p>;
  return (
    <section class="panel">
      <h2>Pods of the latest calls</h2>
      <ul class="plain">
        {[...pods.entries()].map(([key, p]) => (
          <li key={key}>
            <a href={podPath(p.namespace, p.name)}>{key}</a> <span class="muted">last call </span>
            <Time iso={p.at} />
          </li>
        ))}
      </ul>
    </section>
  );
}

function Story({ namespace, name, podUid }: { namespace: string; name: string; podUid: string | null }) {
  const { route } = useLocation();
  const url = `/api/v1/pods/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}${podUid ? `?podUid=${encodeURIComponent(podUid)}` : ''}`;
  const loaded = useLoad(url, (signal) => getJson<PodStory>(url, signal));
  const story = loaded.data;
  const waterfall = story ? layoutWaterfall(story, Date.now()) : null;
  const rows = waterfall?.sandboxes.flatMap((s) => s.rows) ?? [];
  const selected = useListKeys(rows.length, (i) => rows[i] && route(callPath(rows[i].callId)));

  if (loaded.loading) return <Loading />;
  if (loaded.error instanceof ApiRequestError && loaded.error.status === 404) return <p class="muted">No call recorded for {`${namespace}/${name}`}.</p>;
  if (loaded.error || !story || !waterfall) return <ErrorNote error={loaded.error} />;

  let index = 0;
  return (
    <div class="story">
      <h2 class="pod-name">{podText(story.pod)}</h2>
      <p class="actions">
        <DownloadBundle
          query={`pod=${encodeURIComponent(`${namespace}/${name}`)}${podUid ? `&podUid=${encodeURIComponent(podUid)}` : ''}&since=${encodeURIComponent([...story.sandboxes.map((s) => s.startedAt)].sort()[0] ?? '7d')}`}
          fallbackName={`cnirec-${namespace}_${name}.tar.gz`}
        />
      </p>
      <p class="muted">
        {story.pod.uids.length > 1 ? `UIDs (name reused): ` : 'UID: '}
        {story.pod.uids.map((uid, i) => (
          <span key={uid}>
            {i > 0 ? ', ' : ''}
            <a href={podPath(namespace, name, uid)} class={uid === podUid ? 'active' : ''}>
              {uid}
            </a>
          </span>
        ))}
        {' · '}
        {Object.entries(story.totals)
          .map(([cmd, ms]) => `${cmd} ${formatMs(ms)}`)
          .join(' · ')}
      </p>
      {story.truncated && <p class="error-note">More than 10,000 calls: only the newest are drawn. The Calls page pages through all of them.</p>}
      <div class="axis" aria-hidden="true">
        {axisTicks(waterfall).map((t) => (
          <span key={t.pct} class="tick" style={{ left: `${t.pct}%` }}>
            +{formatMs(t.ms)}
          </span>
        ))}
      </div>
      {story.sandboxes.map((sandbox, s) => {
        const laid = waterfall.sandboxes[s]!;
        return (
          <section class="panel sandbox" key={`${sandbox.containerId ?? 'none'}:${s}`}>
            <h3>
              Sandbox <ShortId id={sandbox.containerId} /> <span class="muted">from </span>
              <Time iso={sandbox.startedAt} />
              {Object.entries(sandbox.totals).length > 0 && (
                <span class="muted">
                  {' · '}
                  {Object.entries(sandbox.totals)
                    .map(([cmd, ms]) => `${cmd} ${formatMs(ms)}`)
                    .join(' · ')}
                </span>
              )}
            </h3>
            <div class="waterfall" role="list">
              {laid.rows.map((row) => {
                const i = index++;
                return <Bar key={row.key} row={row} index={i} selected={i === selected} />;
              })}
            </div>
            {sandbox.runtime && <SandboxRuntimeLine runtime={sandbox.runtime} />}
            {sandbox.cache.length > 0 && <CacheEntries entries={sandbox.cache} />}
            {sandbox.findings.length > 0 && <FindingList items={sandbox.findings} />}
          </section>
        );
      })}
    </div>
  );
}

function Bar({ row, index, selected }: { row: WaterfallRow; index: number; selected: boolean }) {
  return (
    <div
      class={`wf-row ${row.kind} ${row.outcome.tone}${selected ? ' selected' : ''}`}
      role="listitem"
      data-row={index}
      data-call-id={row.callId}
      data-kind={row.kind}
      data-depth={row.depth}
    >
      <div class="wf-label" style={{ paddingLeft: `${0.3 + row.depth * 1.2}em` }}>
        {row.kind === 'call' ? <a href={callPath(row.callId)}>{row.label}</a> : <span class="helper-name">{row.label}</span>}
        {row.detail && (
          <span class="wf-detail muted" title={row.detail}>
            {' '}
            {row.detail}
          </span>
        )}
      </div>
      <div class="wf-track" title={`${row.label}: ${formatMs(row.durationMs)} (${row.outcome.text})`}>
        <div class={`wf-bar ${row.outcome.tone}`} style={{ left: `${row.leftPct}%`, width: `${row.widthPct}%` }} />
      </div>
      <div class="wf-duration" data-duration-ms={row.durationMs ?? ''}>
        <Duration ms={row.durationMs} />
      </div>
      <div class="wf-outcome">
        <OutcomeBadge outcome={row.outcome} />
        {row.lostRecords && <span class="badge incomplete" title="The tracer lost records while this call ran">lost records</span>}
        {row.changes && (
          <span class={`wf-changes muted${row.changes.includes('refused') ? ' error-text' : ''}`} title="What this call changed in the kernel (its page lists each change)">
            {row.changes}
          </span>
        )}
      </div>
    </div>
  );
}

function CacheEntries({ entries }: { entries: readonly CacheEntry[] }) {
  return (
    <div class="cache-entries">
      <h4>libcni cache</h4>
      <table class="list">
        <thead>
          <tr>
            <th>Network</th>
            <th>Interface</th>
            <th>IPs</th>
            <th>Written</th>
            <th>State</th>
            <th>Calls</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((e) => (
            <tr key={e.id}>
              <td>{e.networkName ?? '—'}</td>
              <td>{e.ifName ?? '—'}</td>
              <td class="ips">{e.ips.join(', ') || '—'}</td>
              <td>
                <Time iso={e.fileMtime} />
              </td>
              <td>{e.removedAt ? 'removed' : e.supersededAt ? 'rewritten' : 'on disk'}</td>
              <td>
                {e.addCallId && <a href={callPath(e.addCallId)}>ADD</a>} {e.delCallId && <a href={callPath(e.delCallId)}>DEL</a>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

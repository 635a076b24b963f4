/**
 * Bundles in the web view: the "Download bundle" button of the pod and call pages (GET /api/v1/bundle for
 * that pod or call: the file to hand to whoever can help), and the banner an opened bundle shows on every
 * page (which node, taken when, its window: nothing on it is live).
 */

import { useState } from 'preact/hooks';
import { getFile } from '../client/client.js';
import type { SourceBody } from '../client/types.js';

export function DownloadBundle({ query, fallbackName }: { query: string; fallbackName: string }) {
  const [state, setState] = useState<'idle' | 'making' | string>('idle');
  return (
    <span class="bundle-download">
      <button
        type="button"
        disabled={state === 'making'}
        title="The record of this, the node's CNI setup and the daemon's state, in one .tar.gz: open it anywhere with cnirec open FILE"
        onClick={async () => {
          setState('making');
          try {
            const { blob, name } = await getFile(`/api/v1/bundle?${query}`);
            const url = URL.createObjectURL(blob);
            const a = document.createElement('a');
            a.href = url;
            a.download = name ?? fallbackName;
            a.click();
            setTimeout(() => URL.revokeObjectURL(url), 10_000);
            setState('idle');
          } catch (err) {
            setState(err instanceof Error ? err.message : String(err));
          }
        }}
      >
        {state === 'making' ? 'Making bundle…' : 'Download bundle'}
      </button>
      {state !== 'idle' && state !== 'making' && <span class="error-note"> {state}</span>}
    </span>
  );
}

export function BundleBanner({ source }: { source: SourceBody }) {
  const b = source.bundle;
  if (!b) return null;
  const filters = [...b.filters.pods.map((p) => `${p.namespace}/${p.name}`), ...b.filters.calls.map((c) => `call ${c}`)];
  return (
    <div class="bundle-banner" role="status">
      <strong>Bundle of node {source.node}</strong>, taken at <time dateTime={b.takenAt}>{b.takenAt}</time> ({b.file}): calls from {b.window.since} to {b.window.until}
      {filters.length > 0 && <> of {filters.join(', ')}</>}
      {b.payloads.kept !== 'all' && <>; payloads {b.payloads.kept}{b.payloads.why ? ` (${b.payloads.why})` : ''}</>}
      {!b.daemonAnswered && <>; the daemon was down</>}. Not a live node: nothing new is recorded, the capture mode cannot change.
    </div>
  );
}

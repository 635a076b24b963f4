/**
 * The shell: navigation, the token prompt, and the pages by URL (every page's state is in its URL, so it
 * can be shared and reloaded). While the daemon wants a token the prompt replaces the pages: no data
 * is asked for, or shown, without one.
 */

import { LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { ApiRequestError, getJson, onTokenNeeded, storeToken, storedToken } from './client/client.js';
import { TokenPrompt } from './components/token-prompt.js';
import { BundleBanner } from './components/bundle.js';
import type { SourceBody } from './client/types.js';
import { CallDetailPage } from './pages/call-detail.js';
import { CallsPage } from './pages/calls.js';
import { FindingsPage } from './pages/findings.js';
import { PodStoryPage } from './pages/pod-story.js';
import { StatusPage } from './pages/status.js';
import { TailPage } from './pages/tail.js';

const NAV = [
  ['/ui/tail', 'Live tail'],
  ['/ui/pods', 'Pod story'],
  ['/ui/calls', 'Calls'],
  ['/ui/findings', 'Findings'],
  ['/ui/status', 'Node status'],
] as const;

/** An opened bundle has nothing live: no tail in the navigation, and the calls are where it opens. */
function Nav({ bundle }: { bundle: boolean }) {
  const { path } = useLocation();
  const home = bundle ? '/ui/calls' : '/ui/tail';
  return (
    <nav class="top">
      <a class="brand" href={home}>
        cnirec
      </a>
      {NAV.filter(([href]) => !bundle || href !== '/ui/tail').map(([href, label]) => (
        <a key={href} href={href} class={path.startsWith(href) || (href === '/ui/tail' && path === '/ui/') ? 'active' : ''} aria-current={path.startsWith(href) ? 'page' : undefined}>
          {label}
        </a>
      ))}
    </nav>
  );
}

type Access = 'checking' | 'open' | 'token-needed';

export function App() {
  const [access, setAccess] = useState<Access>('checking');
  const [rejected, setRejected] = useState(false);
  // Pages mount again with a new token, so they load with it.
  const [generation, setGeneration] = useState(0);
  const [source, setSource] = useState<SourceBody | null>(null);

  useEffect(() => onTokenNeeded(() => setAccess('token-needed')), []);
  useEffect(() => {
    if (access !== 'checking') return;
    // A cheap protected route says whether this daemon wants a token (and whether the stored one works).
    getJson('/api/v1/tracer').then(
      () => {
        setAccess('open');
        // An older daemon has no /api/v1/source: a live node.
        getJson<SourceBody>('/api/v1/source').then(setSource, () => setSource(null));
      },
      (err: unknown) => {
        if (err instanceof ApiRequestError && err.status === 401) {
          setRejected(storedToken() !== null);
          setAccess('token-needed');
        } else setAccess('open');
      },
    );
  }, [access]);

  const submit = (token: string) => {
    storeToken(token);
    setRejected(false);
    setGeneration((g) => g + 1);
    setAccess('checking');
  };

  return (
    <LocationProvider>
      <Nav bundle={source?.kind === 'bundle'} />
      {source?.bundle && <BundleBanner source={source} />}
      <main>
        {access === 'checking' && <p class="muted">Connecting…</p>}
        {access === 'token-needed' && <TokenPrompt rejected={rejected} onSubmit={submit} />}
        {access === 'open' && (
          <Router key={generation}>
            <Route path="/ui/" component={source?.kind === 'bundle' ? CallsPage : TailPage} />
            <Route path="/ui/tail" component={TailPage} />
            <Route path="/ui/pods" component={PodStoryPage} />
            <Route path="/ui/pods/:namespace/:name" component={PodStoryPage} />
            <Route path="/ui/calls" component={CallsPage} />
            <Route path="/ui/calls/:id" component={CallDetailPage} />
            <Route path="/ui/findings" component={FindingsPage} />
            <Route path="/ui/status" component={StatusPage} />
            <Route default component={NotFound} />
          </Router>
        )}
      </main>
    </LocationProvider>
  );
}

function NotFound() {
  return (
    <section class="panel">
      <h1>No such page</h1>
      <p>
        <a href="/ui/tail">Go to the live tail</a>
      </p>
    </section>
  );
}

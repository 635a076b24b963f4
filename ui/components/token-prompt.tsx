/** Asks once for the daemon's token; the app keeps it for this tab only (sessionStorage). */
import { useState } from 'preact/hooks';

export function TokenPrompt({ rejected, onSubmit }: { rejected: boolean; onSubmit: (token: string) => void }) {
  const [token, setToken] = useState('');
  return (
    <section class="panel token-prompt" role="dialog" aria-labelledby="token-title">
      <h1 id="token-title">This daemon needs its API token</h1>
      <p>
        It was started with <code>--token</code> or <code>--token-file</code>. The token is kept for this browser tab only and sent as a header, never in a
        URL.
      </p>
      {rejected && <p class="error-note">That token was refused.</p>}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (token.trim()) onSubmit(token.trim());
        }}
      >
        <label>
          Token <input type="password" name="token" autoComplete="off" value={token} onInput={(e) => setToken(e.currentTarget.value)} autoFocus />
        </label>
        <button type="submit">Use token</button>
      </form>
    </section>
  );
}

/**
 * One call in full: what ran (argv, CNI_* env), what went in and out (stdin/stdout/stderr), how it
 * ended, what it delegated and ran, libcni's cache entry, and a script to replay it by hand.
 */

import { useRoute } from 'preact-iso';
import { useState } from 'preact/hooks';
import { DownloadBundle } from '../components/bundle.js';
import { getJson, getText } from '../client/client.js';
import type { CallDetail } from '../client/types.js';
import { Duration, ErrorNote, Facts, Loading, Outcome, Section, ShortId, Time } from '../components/bits.js';
import { useLoad } from '../components/hooks.js';
import { JsonBlock, PayloadBlock } from '../components/payload.js';
import { ACTION_SIGN, changesByNetns } from '../model/changes.js';
import { podText } from '../model/format.js';
import { callPath, podPath } from '../model/query.js';

/** Why a call's record cannot vouch for it (the API's lostRecordsCause), in the call page's words. */
const LOST_WHY: Record<NonNullable<CallDetail['lostRecordsCause']> | 'unknown', string> = {
  'tracer-lost': 'the tracer dropped records meanwhile (its buffers were full)',
  'payload-tracer-cut': 'the tracer taking its bytes stopped meanwhile (a mode switch or a restart)',
  'payloads-never-came': 'some of its reads or writes never reached the daemon',
  'early-overflow': 'too many of its records came ahead of its exec',
  'out-of-order': "its plugin's exec came after its own: its place in the tree was guessed",
  unknown: 'the tracer lost records meanwhile',
};

/** What the call changed in the kernel (full capture) and what the kernel said (every mode). Text only: the record's words stay inert. */
function KernelSide({ call }: { call: CallDetail }) {
  return (
    <Section title="Kernel changes">
      {call.changes === null && <p class="muted changes-none">Not captured: this call was recorded in light mode (changes need full capture).</p>}
      {call.changes !== null && call.changes.length === 0 && <p class="muted changes-none">None: the call changed nothing in the kernel.</p>}
      {call.changes !== null &&
        changesByNetns(call.changes).map((g) => (
          <div key={g.netns} class="changes-netns">
            <h3>
              <code>{g.netns}</code>
              {g.refused > 0 && <span class="badge failed">{g.refused} refused</span>}
            </h3>
            <table class="list changes">
              <tbody>
                {g.changes.map((ch, i) => (
                  <tr key={i} class={ch.ok === false ? 'failed' : ''} data-object={ch.object} data-ok={String(ch.ok)}>
                    <td>{ACTION_SIGN[ch.action]}</td>
                    <td>{ch.object}</td>
                    <td>
                      <code>{ch.subject}</code>
                    </td>
                    <td class={ch.ok === false ? 'error-text' : 'muted'}>{ch.ok === false ? `${ch.error?.errno ?? 'refused'}${ch.error?.message ? `: ${ch.error.message}` : ''}` : ch.ok === null ? 'no answer seen' : 'ok'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ))}
      {call.kernelMessages.length > 0 && (
        <div class="kernel-messages">
          <h3>The kernel said</h3>
          <ul class="plain">
            {call.kernelMessages.map((m, i) => (
              <li key={i} class="error-text">
                <code>{m.process}</code> (pid {m.pid}): {m.message}
              </li>
            ))}
          </ul>
        </div>
      )}
    </Section>
  );
}

export function CallDetailPage() {
  const { params } = useRoute();
  const id = params.id ?? '';
  const url = `/api/v1/calls/${encodeURIComponent(id)}`;
  const loaded = useLoad(url, (signal) => getJson<CallDetail>(url, signal));
  if (loaded.loading) return <Loading />;
  if (loaded.error || !loaded.data) return <ErrorNote error={loaded.error ?? 'No such call'} />;
  const c = loaded.data;
  return (
    <div class="page call-page">
      <h1>
        {c.command ?? '?'} {c.plugin} <Outcome run={c} />
      </h1>
      <p class="actions">
        <DownloadBundle query={`call=${encodeURIComponent(c.id)}`} fallbackName={`cnirec-call-${c.id}.tar.gz`} />
      </p>
      <Section title="Summary">
        <Facts
          rows={[
            ['Pod', c.pod ? <a href={podPath(c.pod.namespace, c.pod.name, c.pod.uid)}>{podText(c.pod)}</a> : '—'],
            ['Pod UID', c.pod?.uid ?? '—'],
            ['Container', <ShortId id={c.containerId} />],
            ['Interface', c.ifname ?? '—'],
            ['Netns', c.netns ?? '—'],
            ['Network', c.network ?? '—'],
            c.gcDriven && ['GC', 'a DEL that libcni’s GC ran first: the attachment was missing from the GC’s valid attachments'],
            ['Plugin path', <code>{c.path}</code>],
            ['Started', <Time iso={c.startedAt} />],
            ['Ended', <Time iso={c.endedAt} />],
            ['Duration', <Duration ms={c.durationMs} />],
            ['Exit code', c.exitCode === null ? '—' : String(c.exitCode)],
            c.signal !== null && ['Signal', `${c.signal}${c.coreDumped ? ' (core dumped)' : ''}`],
            c.error !== null && ['Error', <span class="error-text">{c.error}</span>],
            c.incompleteReason !== null && ['Incomplete', c.incompleteReason],
            ['Process', `pid ${c.pid}, parent ${c.ppid}`],
            c.parentProcess && ['Run by', `${c.parentProcess.comm ?? '?'} (pid ${c.parentProcess.pid}${c.parentProcess.exe ? `, ${c.parentProcess.exe}` : ''})`],
            c.parentId !== null && ['Delegated by', <a href={callPath(c.parentId)}>the calling plugin</a>],
            ['Capture', `${c.captureMode === 'light' ? 'light: stdin, stdout and stderr were not captured' : c.captureMode}${c.lostRecords ? ` · ${LOST_WHY[c.lostRecordsCause ?? 'unknown']}: payloads, helpers or delegated calls may be incomplete` : ''}`],
            c.execChain.length > 1 && ['Images', <code>{c.execChain.join(' → ')}</code>],
            c.stdioShared && ['stdout and stderr', 'one open file (a terminal, or 2>&1 into one pipe), and some writes went through an fd that stood for neither: filed as stdout, they may be stderr'],
            c.uncapturedIo > 0 && ['Not captured', `${c.uncapturedIo} reads/writes full mode did not take (sendfile, splice, copy_file_range, sendmsg, iovecs past the 2nd…): the streams are marked truncated`],
            c.envTruncated && ['Environment', 'cut by the tracer: CNI_* values past the cut (command, container, pod) may be missing'],
            c.pathTruncated && ['Path', 'cut by the tracer: the plugin path is its beginning'],
            (c.outputAfterExit.stdout !== null || c.outputAfterExit.stderr !== null) && [
              'After exit',
              `descendants wrote to ${[c.outputAfterExit.stdout !== null ? `stdout from byte ${c.outputAfterExit.stdout}` : '', c.outputAfterExit.stderr !== null ? `stderr from byte ${c.outputAfterExit.stderr}` : ''].filter(Boolean).join(' and ')} after the plugin exited (the caller still got it)`,
            ],
          ]}
        />
      </Section>
      <Section title="argv">
        <ol class="argv">
          {c.argv.map((arg, i) => (
            <li key={i}>
              <code>{arg}</code>
            </li>
          ))}
        </ol>
      </Section>
      <Section title="Environment (CNI_*)">
        <table class="list env">
          <tbody>
            {Object.entries(c.env).map(([k, v]) => (
              <tr key={k}>
                <th>
                  <code>{k}</code>
                </th>
                <td>
                  <code>{v}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      {(c.configSource === 'cache' || c.resultSource === 'cache') && (
        <Section title="Config and result, from libcni's cache">
          <p class="muted">No payloads were captured for this call (light capture): this is what libcni cached for its attachment — the whole conf/conflist and the chain's final result, not the bytes on this plugin's pipes.</p>
          {c.configSource === 'cache' && <JsonBlock value={c.config} />}
          {c.resultSource === 'cache' && <JsonBlock value={c.result} />}
        </Section>
      )}
      <Section title="Payloads">
        <PayloadBlock name="stdin" payload={c.stdin} captureMode={c.captureMode} />
        <PayloadBlock name="stdout" payload={c.stdout} captureMode={c.captureMode} />
        <PayloadBlock name="stderr" payload={c.stderr} captureMode={c.captureMode} />
      </Section>
      <KernelSide call={c} />
      {c.children.length > 0 && (
        <Section title="Delegated calls">
          <ul class="plain">
            {c.children.map((child) => (
              <li key={child.id}>
                <a href={callPath(child.id)}>
                  {child.command ?? '?'} {child.plugin}
                </a>{' '}
                <Duration ms={child.durationMs} /> <Outcome run={child} />
              </li>
            ))}
          </ul>
        </Section>
      )}
      {c.helpers.length > 0 && (
        <Section title="Helpers">
          {c.helpers.map((h) => (
            <details key={h.seq} class="helper">
              <summary>
                <code>{h.argv.join(' ')}</code> <Duration ms={h.durationMs} /> <Outcome run={h} />
              </summary>
              <PayloadBlock name="stdout" payload={h.stdout} captureMode={c.captureMode} />
              <PayloadBlock name="stderr" payload={h.stderr} captureMode={c.captureMode} />
            </details>
          ))}
        </Section>
      )}
      {c.cache && (
        <Section title="libcni cache entry">
          <Facts
            rows={[
              ['File', <code>{c.cache.path}</code>],
              ['Network', c.cache.networkName ?? '—'],
              ['IPs', c.cache.ips.join(', ') || '—'],
              ['Written', <Time iso={c.cache.fileMtime} />],
              c.cache.removedAt !== null && ['Removed', <Time iso={c.cache.removedAt} />],
            ]}
          />
          <JsonBlock value={c.cache.result} />
        </Section>
      )}
      <Replay id={c.id} plugin={c.plugin} />
    </div>
  );
}

function Replay({ id, plugin }: { id: string; plugin: string }) {
  const [script, setScript] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const load = async (): Promise<string> => {
    if (script !== null) return script;
    const text = await getText(`/api/v1/calls/${encodeURIComponent(id)}/replay`);
    setScript(text);
    return text;
  };
  const act = (what: () => Promise<void>) => what().catch((err: unknown) => setNote(err instanceof Error ? err.message : String(err)));
  return (
    <Section title="Replay">
      <p class="muted">A shell script that runs the same plugin with exactly the recorded CNI_* variables and stdin. It changes this node's network.</p>
      <button type="button" onClick={() => act(async () => void (await load()))}>
        Show
      </button>{' '}
      <button
        type="button"
        onClick={() =>
          act(async () => {
            await navigator.clipboard.writeText(await load());
            setNote('Copied.');
          })
        }
      >
        Copy
      </button>{' '}
      <button
        type="button"
        onClick={() =>
          act(async () => {
            const url = URL.createObjectURL(new Blob([await load()], { type: 'text/x-shellscript' }));
            const a = document.createElement('a');
            a.href = url;
            a.download = `replay-${plugin}-${id}.sh`;
            a.click();
            setTimeout(() => URL.revokeObjectURL(url), 10_000);
          })
        }
      >
        Download
      </button>
      {note && <span class="muted"> {note}</span>}
      {script !== null && <pre class="payload-text replay">{script}</pre>}
    </Section>
  );
}

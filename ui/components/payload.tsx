/**
 * A captured stream: pretty JSON (with the exact text a click away), text, or a hex dump when the bytes
 * are not UTF-8; redaction markers and truncation said plainly. Everything is rendered as text nodes.
 */

import { useState } from 'preact/hooks';
import type { Payload } from '../client/types.js';
import { formatBytes } from '../model/format.js';
import { hexLines } from '../model/hex.js';
import { emptyPayloadNote, splitRedacted, viewPayload } from '../model/payload.js';

/** Text with the daemon's "[redacted]" markers shown as such. */
export function RedactedText({ text }: { text: string }) {
  return (
    <>
      {splitRedacted(text).map((part, i) =>
        i % 2 === 1 ? (
          <mark class="redacted" title="A secret value, replaced before it was stored" key={i}>
            {part}
          </mark>
        ) : (
          part
        ),
      )}
    </>
  );
}

export function PayloadBlock({ name, payload, captureMode }: { name: string; payload: Payload; captureMode: 'full' | 'light' }) {
  const view = viewPayload(payload);
  const [raw, setRaw] = useState(false);
  return (
    <div class="payload" data-stream={name}>
      <div class="payload-head">
        <strong>{name}</strong>
        <span class="muted">
          {formatBytes(payload.bytes)}
          {payload.truncated ? ` of ${formatBytes(payload.totalBytes)}` : ''}
        </span>
        {payload.truncated && <span class="badge incomplete">truncated</span>}
        {payload.redacted && (
          <span class="badge redacted-badge" title={payload.redactedPointers.join('\n')}>
            redacted: {payload.redactedPointers.length} value{payload.redactedPointers.length === 1 ? '' : 's'}
          </span>
        )}
        {view.kind === 'binary' && <span class="badge">not UTF-8: hex</span>}
        {view.kind === 'json' && (
          <button type="button" class="link" onClick={() => setRaw(!raw)}>
            {raw ? 'pretty' : 'exact text'}
          </button>
        )}
      </div>
      {view.kind === 'empty' && <p class="muted">{emptyPayloadNote(payload, captureMode)}</p>}
      {view.kind === 'text' && (
        <pre class="payload-text" data-view="text">
          <RedactedText text={view.text} />
        </pre>
      )}
      {view.kind === 'json' && (
        <pre class="payload-text" data-view={raw ? 'text' : 'json'}>
          <RedactedText text={raw ? view.text : view.pretty} />
        </pre>
      )}
      {view.kind === 'binary' && <HexView bytes={view.bytes} />}
      {payload.truncated && <p class="truncated-note">… {formatBytes(payload.totalBytes - payload.bytes)} not captured</p>}
    </div>
  );
}

export function HexView({ bytes }: { bytes: Uint8Array }) {
  return (
    <pre class="hex" data-view="hex">
      {hexLines(bytes)
        .map((l) => `${l.offset}  ${l.hex.padEnd(49)}  ${l.ascii}`)
        .join('\n')}
    </pre>
  );
}

export function JsonBlock({ value }: { value: unknown }) {
  return (
    <pre class="payload-text">
      <RedactedText text={JSON.stringify(value, null, 2) ?? 'null'} />
    </pre>
  );
}

/**
 * A captured stream, ready to show: its exact bytes, and how to read them (pretty JSON, text, or hex
 * when they are not UTF-8). Pure; the page renders the parts as text, never as HTML.
 */

export type PayloadView =
  | { readonly kind: 'empty' }
  | { readonly kind: 'json'; readonly text: string; readonly pretty: string }
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'binary'; readonly bytes: Uint8Array };

export function decodeBase64(base64: string): Uint8Array {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** The API gives `text` only when the bytes are valid UTF-8; otherwise they are shown in hex. */
export function viewPayload(payload: { readonly text: string | null; readonly base64: string; readonly bytes: number }): PayloadView {
  if (payload.bytes === 0) return { kind: 'empty' };
  if (payload.text === null) return { kind: 'binary', bytes: decodeBase64(payload.base64) };
  const pretty = prettyJson(payload.text);
  return pretty === null ? { kind: 'text', text: payload.text } : { kind: 'json', text: payload.text, pretty };
}

/**
 * What an empty stream says: nothing went by; or nothing was taken (a call recorded in light capture); or bytes
 * went by that the tracer did not take (the truncation note says how many).
 */
export function emptyPayloadNote(payload: { readonly truncated: boolean }, captureMode: 'full' | 'light'): string {
  if (payload.truncated) return '(none captured)';
  return captureMode === 'light' ? '(not captured: light capture)' : '(empty)';
}

/** Indented JSON, or null when the text is not a JSON object or array (a bare string stays as sent). */
export function prettyJson(text: string): string | null {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return null;
  try {
    return JSON.stringify(JSON.parse(trimmed), null, 2);
  } catch {
    return null;
  }
}

/** Text cut where the redaction markers are, so the page can mark them: odd indexes are markers. */
export function splitRedacted(text: string): string[] {
  return text.split(/("\[redacted\]")/);
}

// Captured bytes as the API shows them: exact bytes always, text only when it is exactly those bytes.
import { describe, expect, it } from 'vitest';
import { jsonOrNull, presentPayload } from '../../api/present/payload.js';

const captured = (bytes: Buffer, extra: { totalBytes?: number; truncated?: boolean } = {}) => ({ bytes, totalBytes: extra.totalBytes ?? bytes.length, truncated: extra.truncated ?? false });

describe('a payload', () => {
  it('has text and base64 when the bytes are valid UTF-8', () => {
    const bytes = Buffer.from('{"msg":"ünï"}');
    expect(presentPayload(captured(bytes))).toEqual({ text: '{"msg":"ünï"}', base64: bytes.toString('base64'), bytes: 15, totalBytes: 15, truncated: false, redacted: false, redactedPointers: [] });
  });

  it('has no text when the bytes are not valid UTF-8, and the exact bytes in base64', () => {
    const bytes = Buffer.from([0x7b, 0xff, 0x00, 0xc3, 0x28]);
    const p = presentPayload(captured(bytes));
    expect(p.text).toBeNull();
    expect(Buffer.from(p.base64, 'base64').equals(bytes)).toBe(true);
  });

  it('has no text when a multi-byte character was cut at the capture cap', () => {
    const cut = Buffer.from('caf\u00e9').subarray(0, 4);
    expect(presentPayload(captured(cut, { totalBytes: 5, truncated: true }))).toMatchObject({ text: null, bytes: 4, totalBytes: 5, truncated: true });
  });

  it('keeps a leading byte-order mark in the text instead of dropping it', () => {
    expect(presentPayload(captured(Buffer.from('\ufeffx'))).text).toBe('\ufeffx');
  });

  it('encodes only the viewed bytes of a pooled buffer', () => {
    const view = Buffer.from('....{"ok":1}....').subarray(4, 12);
    expect(Buffer.from(presentPayload(captured(view)).base64, 'base64').toString()).toBe('{"ok":1}');
  });

  it('is empty text, not null, for an empty stream', () => {
    expect(presentPayload(captured(Buffer.alloc(0)))).toMatchObject({ text: '', base64: '', bytes: 0 });
  });
});

describe('the JSON inside a payload', () => {
  it('is the parsed value when the text is JSON', () => {
    expect(jsonOrNull('{"cniVersion":"1.0.0"}')).toEqual({ cniVersion: '1.0.0' });
  });

  it.each([null, '', '  \n', 'no IP addresses available', '{"cut":'])('is null for %j', (text) => {
    expect(jsonOrNull(text)).toBeNull();
  });
});

// What get_call and pod_story hand a model: streams cut to a cap on a character boundary and flagged,
// bytes that are not text as base64 cut alike, oversized fields shortened and named, the rest untouched.
import { describe, expect, it } from 'vitest';
import type { Payload } from '../../cli/api-client.js';
import { sizePayload, sizeRecord } from '../../cli/mcp/sizing.js';

const payload = (bytes: Buffer, over: Partial<Payload> = {}): Payload => {
  const text = new TextDecoder('utf-8', { fatal: true });
  let t: string | null;
  try {
    t = text.decode(bytes);
  } catch {
    t = null;
  }
  return { text: t, base64: bytes.toString('base64'), bytes: bytes.length, totalBytes: bytes.length, truncated: false, redacted: false, redactedPointers: [], ...over };
};

describe('sizePayload', () => {
  it('gives short text whole, without the base64 that repeats it', () => {
    expect(sizePayload(payload(Buffer.from('boom\n')), 100)).toEqual({ text: 'boom\n', base64: null, bytes: 5, totalBytes: 5, truncated: false, redacted: false, redactedPointers: [], shownBytes: 5, cut: false });
  });

  it('cuts long text on a character boundary and says how much it shows', () => {
    // 'é' is two bytes: a cap of 5 falls inside the third one.
    const sized = sizePayload(payload(Buffer.from('ééééé')), 5);
    expect(sized).toMatchObject({ text: 'éé', shownBytes: 4, cut: true, bytes: 10 });
  });

  it('keeps the capture’s own flags apart from the cut', () => {
    expect(sizePayload(payload(Buffer.from('abc'), { truncated: true, totalBytes: 99_999, redacted: true, redactedPointers: ['/x'] }), 100)).toMatchObject({ truncated: true, totalBytes: 99_999, redacted: true, redactedPointers: ['/x'], cut: false });
  });

  it('gives bytes that are not UTF-8 as base64, cut to the cap', () => {
    const bytes = Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x02, 0x03]);
    expect(sizePayload(payload(bytes), 4)).toMatchObject({ text: null, base64: bytes.subarray(0, 4).toString('base64'), shownBytes: 4, cut: true });
    expect(sizePayload(payload(bytes), 6)).toMatchObject({ text: null, base64: bytes.toString('base64'), cut: false });
  });
});

describe('sizeRecord', () => {
  it('cuts every stream wherever it is, shortens oversized fields, passes the rest and unknown fields through', () => {
    const record = {
      id: 'c1',
      stderr: payload(Buffer.from('x'.repeat(50))),
      helpers: [{ seq: 0, stdout: payload(Buffer.from('y'.repeat(50))) }],
      config: { big: 'z'.repeat(500) },
      children: Array.from({ length: 10 }, (_, i) => ({ id: `child-${i}`, pad: 'p'.repeat(40) })),
      kernelMessages: [{ text: 'later field' }],
    };
    const { value, cut } = sizeRecord(record, { payloadBytes: 10, fieldBytes: 300 });
    expect(value.id).toBe('c1');
    expect(value.stderr).toMatchObject({ text: 'x'.repeat(10), cut: true });
    expect((value.helpers as Array<{ stdout: { text: string } }>)[0]!.stdout.text).toBe('y'.repeat(10));
    expect(value.config).toBeNull();
    expect((value.children as unknown[]).length).toBeLessThan(10);
    expect(value.kernelMessages).toEqual([{ text: 'later field' }]);
    expect(cut).toEqual([
      'stderr (10 of 50 bytes shown)',
      'helpers[0].stdout (10 of 50 bytes shown)',
      expect.stringMatching(/^config \(\d+ bytes of JSON left out\)$/),
      expect.stringMatching(/^children \(\d of 10 items kept\)$/),
    ]);
  });
});

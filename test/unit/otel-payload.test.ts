import { describe, expect, it } from 'vitest';
import type { CapturedStream } from '../../collector/types.js';
import { CAPPED_PAYLOAD_BYTES, charBoundary, payloadView } from '../../otel/map/payload.js';

const stream = (bytes: Buffer, extra: Partial<CapturedStream> = {}): CapturedStream => ({ bytes, totalBytes: bytes.length, truncated: false, ...extra });

describe('payloads for export', () => {
  it('sends nothing with --otlp-payloads none, or for a stream nothing went through', () => {
    expect(payloadView(stream(Buffer.from('{"a":1}')), 'none')).toBeNull();
    expect(payloadView(stream(Buffer.alloc(0)), 'capped')).toBeNull();
  });

  it('keeps a small UTF-8 payload whole, with its size and redactions', () => {
    const v = payloadView(stream(Buffer.from('{"password":"[redacted]","é":1}'), { redactions: ['/password'] }), 'capped');
    expect(v).toEqual({ value: '{"password":"[redacted]","é":1}', encoding: 'utf-8', totalBytes: 32, truncated: false, capped: false, redactedPointers: ['/password'] });
  });

  it('caps a large payload on a character boundary and marks it', () => {
    // Two-byte characters straddling the cap: the cut must not split one.
    const text = `x${'é'.repeat(CAPPED_PAYLOAD_BYTES)}`;
    const v = payloadView(stream(Buffer.from(text)), 'capped')!;
    expect(Buffer.byteLength(v.value)).toBeLessThanOrEqual(CAPPED_PAYLOAD_BYTES);
    expect(Buffer.byteLength(v.value)).toBeGreaterThan(CAPPED_PAYLOAD_BYTES - 2);
    expect(text.startsWith(v.value)).toBe(true);
    expect(v).toMatchObject({ capped: true, truncated: true, totalBytes: Buffer.byteLength(text), encoding: 'utf-8' });
  });

  it('sends everything stored with full', () => {
    const big = Buffer.alloc(CAPPED_PAYLOAD_BYTES * 3, 0x61);
    expect(payloadView(stream(big), 'full')).toMatchObject({ value: big.toString(), capped: false, truncated: false });
  });

  it('sends bytes that are not UTF-8 as base64, capped by bytes', () => {
    const bin = Buffer.from([0xff, 0x00, 0xfe, 0x41]);
    expect(payloadView(stream(bin), 'capped')).toMatchObject({ value: bin.toString('base64'), encoding: 'base64', capped: false });
    const bigBin = Buffer.concat([Buffer.from([0xff]), Buffer.alloc(CAPPED_PAYLOAD_BYTES * 2)]);
    const v = payloadView(stream(bigBin), 'capped')!;
    expect(Buffer.from(v.value, 'base64')).toEqual(bigBin.subarray(0, CAPPED_PAYLOAD_BYTES));
    expect(v.capped).toBe(true);
  });

  it('marks a payload the tracer already cut, even when it is sent whole', () => {
    expect(payloadView(stream(Buffer.from('abc'), { totalBytes: 70_000, truncated: true }), 'capped')).toMatchObject({ truncated: true, capped: false, totalBytes: 70_000 });
  });

  it.each([
    ['ASCII', Buffer.from('abcdef'), 3, 3],
    ['before a two-byte character', Buffer.from('aé'), 2, 1],
    ['inside a four-byte character', Buffer.from('a😀b'), 3, 1],
    ['past the end', Buffer.from('ab'), 10, 2],
  ])('cuts %s at a character boundary', (_name, bytes, limit, expected) => {
    expect(charBoundary(bytes, limit)).toBe(expected);
  });
});

import { describe, expect, it } from 'vitest';
import { attachmentTraceId, callSpanId, callTrace, helperSpanId, parseTraceparent, type TraceKey } from '../../otel/map/trace-ids.js';

const TP_SAMPLED = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const TP_UNSAMPLED = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00';

const key = (k: Partial<TraceKey> & { id: string }): TraceKey => ({ parentId: null, traceParent: null, traceState: null, containerId: 'c1', ifname: 'eth0', ...k });

describe('W3C traceparent', () => {
  it.each([
    ['a sampled version-00 context', TP_SAMPLED, { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', sampled: true }],
    ['an unsampled one', TP_UNSAMPLED, { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', sampled: false }],
    ['a later version with more fields', '01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-03-extra', { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', sampled: true }],
  ])('reads %s', (_name, text, expected) => {
    expect(parseTraceparent(text)).toEqual(expected);
  });

  it.each([
    ['null', null],
    ['garbage', 'not-a-traceparent'],
    ['version ff', 'ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-b7ad6b7169203331-01`],
    ['an all-zero parent id', `00-0af7651916cd43dd8448eb211c80319c-${'0'.repeat(16)}-01`],
    ['upper-case hex', '00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01'],
    ['version 00 with an extra field', `${TP_SAMPLED}-x`],
    ['a short trace id', '00-0af7651916cd43dd8448eb211c8031-b7ad6b7169203331-01'],
  ])('refuses %s', (_name, text) => {
    expect(parseTraceparent(text)).toBeNull();
  });
});

describe('span and trace ids', () => {
  it('are stable, distinct and valid hex', () => {
    expect(callSpanId('a')).toBe(callSpanId('a'));
    expect(callSpanId('a')).not.toBe(callSpanId('b'));
    expect(helperSpanId('a', 0)).not.toBe(helperSpanId('a', 1));
    expect(helperSpanId('a', 0)).not.toBe(callSpanId('a'));
    expect(callSpanId('a')).toMatch(/^[0-9a-f]{16}$/);
    expect(attachmentTraceId({ id: 'x', containerId: 'c', ifname: 'eth0' })).toMatch(/^[0-9a-f]{32}$/);
  });

  it('put every call of one attachment in one trace, and other attachments elsewhere', () => {
    const add = attachmentTraceId({ id: 'add', containerId: 'c1', ifname: 'eth0' });
    expect(attachmentTraceId({ id: 'del-days-later', containerId: 'c1', ifname: 'eth0' })).toBe(add);
    expect(attachmentTraceId({ id: 'add', containerId: 'c1', ifname: 'net1' })).not.toBe(add);
    expect(attachmentTraceId({ id: 'add', containerId: 'c2', ifname: 'eth0' })).not.toBe(add);
    // No container id (a GC call): a trace of its own.
    expect(attachmentTraceId({ id: 'gc-1', containerId: null, ifname: null })).not.toBe(attachmentTraceId({ id: 'gc-2', containerId: null, ifname: null }));
  });
});

describe('the trace of a call', () => {
  it('joins a sampled TRACEPARENT as a child, with its tracestate', () => {
    const t = callTrace([key({ id: 'bridge', traceParent: TP_SAMPLED, traceState: 'congo=t61rcWkgMzE' })]);
    expect(t).toEqual({
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: callSpanId('bridge'),
      parentSpanId: 'b7ad6b7169203331',
      traceState: 'congo=t61rcWkgMzE',
      link: null,
    });
  });

  it('keeps a call without TRACEPARENT in its attachment trace as a root span', () => {
    expect(callTrace([key({ id: 'del' })])).toEqual({ traceId: attachmentTraceId({ id: 'del', containerId: 'c1', ifname: 'eth0' }), spanId: callSpanId('del'), parentSpanId: null, traceState: null, link: null });
  });

  it('links an unsampled TRACEPARENT instead of joining a trace nobody recorded', () => {
    const t = callTrace([key({ id: 'add', traceParent: TP_UNSAMPLED })]);
    expect(t.traceId).toBe(attachmentTraceId({ id: 'add', containerId: 'c1', ifname: 'eth0' }));
    expect(t.parentSpanId).toBeNull();
    expect(t.link).toEqual({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331' });
  });

  it('puts a delegated call under its delegating call, in the trace of the top of the chain', () => {
    const multus = key({ id: 'multus', traceParent: TP_SAMPLED });
    const bridge = key({ id: 'bridge', parentId: 'multus', containerId: 'c1' });
    const hostLocal = key({ id: 'host-local', parentId: 'bridge', traceParent: null });
    const t = callTrace([hostLocal, bridge, multus]);
    expect(t).toMatchObject({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: callSpanId('host-local'), parentSpanId: callSpanId('bridge'), link: null });
  });

  it('keeps a delegated call under its parent span when the parent row is gone', () => {
    const t = callTrace([key({ id: 'host-local', parentId: 'pruned-bridge' })]);
    expect(t.parentSpanId).toBe(callSpanId('pruned-bridge'));
    expect(t.traceId).toBe(attachmentTraceId({ id: 'host-local', containerId: 'c1', ifname: 'eth0' }));
  });
});

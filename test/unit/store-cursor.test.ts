// Pagination cursors are opaque strings that decode to exactly what was encoded.
import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from '../../store/calls/cursor.js';

describe('pagination cursors', () => {
  it.each([
    { startedAtUs: 1_763_750_000_123_456, id: '0m3x9k2a1b4-1fz' },
    { startedAtUs: 0, id: '' },
    { startedAtUs: 1, id: 'ünï "quoted" \\ id' },
  ])('round-trip $id', (key) => {
    const cursor = encodeCursor(key);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor, 'db')).toEqual(key);
  });

  it.each([
    ['empty', ''],
    ['not base64 JSON', '!!!'],
    ['an object', Buffer.from('{"startedAtUs":1,"id":"x"}').toString('base64url')],
    ['three elements', Buffer.from('[1,"x",2]').toString('base64url')],
    ['a string time', Buffer.from('["1","x"]').toString('base64url')],
    ['an unsafe integer', Buffer.from('[1e300,"x"]').toString('base64url')],
    ['a numeric id', Buffer.from('[1,2]').toString('base64url')],
  ])('reject %s with an invalid-cursor StoreError', (_name, cursor) => {
    expect(() => decodeCursor(cursor, 'db')).toThrow(expect.objectContaining({ name: 'StoreError', code: 'invalid-cursor' }));
  });
});

/**
 * Keyset pagination cursors: the (started_at_us, id) of the last row a page
 * returned. The next page asks for rows strictly below that pair in the list
 * order, so rows inserted meanwhile (newer, or older ones arriving late)
 * never shift a page the way OFFSET would, and none is returned twice.
 * Opaque to clients (base64url JSON) so the key can change without an API change.
 */

import { StoreError } from '../db/index.js';

export interface CursorKey {
  readonly startedAtUs: number;
  readonly id: string;
}

export function encodeCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify([key.startedAtUs, key.id]), 'utf8').toString('base64url');
}

/** Throws StoreError('invalid-cursor') for anything encodeCursor did not produce. */
export function decodeCursor(cursor: string, file: string): CursorKey {
  const invalid = () =>
    new StoreError('invalid-cursor', file, `The cursor "${cursor.slice(0, 40)}" was not issued by this store; start again from the first page.`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) throw invalid();
  const [startedAtUs, id] = parsed as unknown[];
  if (typeof startedAtUs !== 'number' || !Number.isSafeInteger(startedAtUs) || typeof id !== 'string') throw invalid();
  return { startedAtUs, id };
}

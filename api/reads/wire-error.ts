/**
 * Errors across the thread boundary. A worker's thrown ApiError or
 * StoreError arrives on the main thread as the same class with the same
 * fields, so the one error handler (api/errors.ts) answers exactly as if
 * the route had thrown it; anything else keeps its message and stack for
 * the log and becomes a 500 there.
 */

import { StoreError, type StoreErrorCode } from '../../store/index.js';
import { ApiError, type ApiErrorCode } from '../errors.js';
import type { Issue } from '../schemas/error.js';

export type WireError =
  | {
      readonly kind: 'api';
      readonly status: number;
      readonly code: ApiErrorCode;
      readonly message: string;
      readonly issues: readonly Issue[] | null;
      readonly headers: Readonly<Record<string, string>>;
    }
  | { readonly kind: 'store'; readonly code: StoreErrorCode; readonly file: string; readonly message: string }
  | { readonly kind: 'other'; readonly name: string; readonly message: string; readonly stack: string | null };

export function toWireError(err: unknown): WireError {
  if (err instanceof ApiError) {
    return { kind: 'api', status: err.status, code: err.code, message: err.message, issues: err.issues ?? null, headers: err.headers };
  }
  if (err instanceof StoreError) return { kind: 'store', code: err.code, file: err.file, message: err.message };
  if (err instanceof Error) return { kind: 'other', name: err.name, message: err.message, stack: err.stack ?? null };
  return { kind: 'other', name: 'Error', message: String(err), stack: null };
}

export function fromWireError(w: WireError): Error {
  switch (w.kind) {
    case 'api':
      return new ApiError(w.status, w.code, w.message, w.issues ?? undefined, { headers: w.headers });
    case 'store':
      return new StoreError(w.code, w.file, w.message);
    case 'other': {
      const err = new Error(`in a read worker: ${w.message}`);
      err.name = w.name;
      if (w.stack !== null) err.stack = `${err.name}: ${err.message}\n${w.stack.split('\n').slice(1).join('\n')}`;
      return err;
    }
  }
}

/** A failed call's one-line error and the kernel's own words (pure; the API, the tail and OTLP say the same). */

import type { KernelMessage } from '../types.js';
import { ERRNO_TEXTS } from './errno.js';

/**
 * A plugin's error that is (or ends with) an errno's bare text — `could not
 * add "br0": invalid argument` — hides why; the kernel's own message says it.
 */
export function withKernelMessage(error: string | null, messages: readonly Pick<KernelMessage, 'message'>[]): string | null {
  const kernel = messages.at(-1)?.message;
  if (kernel === undefined || kernel === '') return error;
  if (error === null || error === '') return kernel;
  const bare = ERRNO_TEXTS.find((t) => error.toLowerCase() === t || error.toLowerCase().endsWith(`: ${t}`));
  if (bare === undefined) return error;
  return error.length === bare.length ? `${kernel} (${error})` : `${error} (kernel: ${kernel})`;
}


/** Query parameters several routes take, declared once so they read and refuse alike everywhere. */

import { z } from 'zod';

/** Kubernetes names and plugin binaries stay well below this; the cap only stops abuse. */
export const MAX_NAME_LENGTH = 253;

/** A Kubernetes name, a container id, a plugin: one non-empty word. */
export const nameParam = (what: string) => z.string().min(1).max(MAX_NAME_LENGTH).describe(what);

/** "true" or "false" exactly: "yes" or "1" are more likely typos than intent. */
export const booleanParam = (what: string) =>
  z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .describe(what);

/** A pod as namespace/name. */
export const podParam = (what: string) =>
  z
    .string()
    .max(2 * MAX_NAME_LENGTH + 1)
    .regex(/^[^/]+\/[^/]+$/, 'Must be namespace/name')
    .describe(what);

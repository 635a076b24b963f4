/**
 * Names schemas as components of the OpenAPI document. The document
 * generator reads zod's global registry, which also holds every
 * `.describe()` text, so components are registered there, keeping the
 * description a schema already has. Recursive schemas (the pod's call tree)
 * must be named, or the generator cannot express them.
 */

import { z } from 'zod';

/** Registers `schema` as the component `id` and returns it, so a schema is declared and named in one statement. */
export function component<T extends z.ZodType>(id: string, schema: T): T {
  // Re-registering (a module evaluated twice in one process, as test runners do) replaces the entry; zod allows it.
  z.globalRegistry.add(schema, { ...z.globalRegistry.get(schema), id });
  return schema;
}

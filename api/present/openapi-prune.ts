/**
 * Drops component schemas no operation refers to. The generator emits every
 * registered schema twice, as the request-side `XInput` and the response
 * side `X`; our components are response shapes, so the `Input` copies are
 * noise that would only confuse a reader (or a client generator).
 */

const REF_PREFIX = '#/components/schemas/';

interface OpenApiParts {
  readonly paths?: unknown;
  readonly components?: { readonly schemas?: Readonly<Record<string, unknown>> };
}

export function pruneUnusedComponents<T extends object>(doc: T): T {
  const { paths, components } = doc as OpenApiParts;
  const schemas = components?.schemas;
  if (!schemas) return doc;
  const used = new Set<string>();
  const pending = [...refsIn(paths)];
  while (pending.length > 0) {
    const name = pending.pop()!;
    if (used.has(name)) continue;
    used.add(name);
    pending.push(...refsIn(schemas[name]));
  }
  const kept = Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name)));
  return { ...doc, components: { ...components, schemas: kept } };
}

/** Component names `value` refers to with `$ref`, anywhere inside it. */
function refsIn(value: unknown): string[] {
  const out: string[] = [];
  const visit = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(visit);
    else if (v !== null && typeof v === 'object') {
      for (const [key, child] of Object.entries(v)) {
        if (key === '$ref' && typeof child === 'string' && child.startsWith(REF_PREFIX)) out.push(child.slice(REF_PREFIX.length));
        else visit(child);
      }
    }
  };
  visit(value);
  return out;
}

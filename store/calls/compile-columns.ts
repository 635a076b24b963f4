/**
 * Turns a column list into straight-line code once, at load. The row
 * builders and decoders run for every call written or read, so they must be
 * what a person would write by hand: one object or array literal with every
 * column in order. V8 (Node 20) makes a spread of ~30 properties, or a loop
 * that loads `row[column]` for each column (a megamorphic load per column),
 * several times slower than such a literal (bench/README.md, "API latency");
 * generating the literal from the list keeps the speed without a second copy
 * of the list.
 */

/**
 * `function name(params) { body }`, where `body` may call the functions in
 * `bound` by their keys. Only ever fed column names and field names from the
 * constant lists in call-columns.ts, never data.
 */
export function compileFunction<F>(name: string, params: readonly string[], body: string, bound: Readonly<Record<string, unknown>> = {}): F {
  const names = Object.keys(bound);
  const make = new Function(...names, `return function ${name}(${params.join(', ')}) {\n${body}\n};`) as (...values: unknown[]) => F;
  return make(...names.map((n) => bound[n]));
}

/** `{ k1: v1, k2: v2 }` from pairs, in their order. */
export const objectLiteral = (entries: ReadonlyArray<readonly [string, string]>): string => `{ ${entries.map(([k, v]) => `${k}: ${v}`).join(', ')} }`;

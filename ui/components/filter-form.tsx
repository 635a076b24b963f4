/** A filter as a form: submitting it changes the URL (the page loads from there). */
import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import { queryString, type Filter } from '../model/query.js';

export interface FieldSpec {
  readonly name: string;
  readonly label: string;
  /** A select's choices ('' = any); absent: a text input. */
  readonly options?: readonly (readonly [string, string])[];
  readonly placeholder?: string;
}

export function FilterForm<F extends readonly string[]>(props: {
  path: string;
  fields: F;
  specs: readonly FieldSpec[];
  value: Filter<F>;
  children?: ComponentChildren;
}) {
  const { route } = useLocation();
  const values = props.value as Record<string, string | undefined>;
  // Uncontrolled fields (the page re-renders often, the tail several times a second, and must not undo what
  // is being typed or picked); keyed by the applied filter, so a new URL starts them afresh.
  return (
    <form
      key={queryString(props.fields, props.value)}
      class="filters"
      onSubmit={(event) => {
        event.preventDefault();
        const data = new FormData(event.currentTarget);
        const next: Record<string, string> = {};
        for (const spec of props.specs) {
          const v = data.get(spec.name);
          if (typeof v === 'string' && v.trim()) next[spec.name] = v.trim();
        }
        route(`${props.path}${queryString(props.fields, next as Filter<F>)}`);
      }}
    >
      {props.specs.map((spec) => (
        <label key={spec.name}>
          {spec.label}
          {spec.options ? (
            <select name={spec.name}>
              {spec.options.map(([value, text]) => (
                <option key={value} value={value} selected={value === (values[spec.name] ?? '')}>
                  {text}
                </option>
              ))}
            </select>
          ) : (
            <input name={spec.name} defaultValue={values[spec.name] ?? ''} placeholder={spec.placeholder} />
          )}
        </label>
      ))}
      <button type="submit">Apply</button>
      {props.children}
    </form>
  );
}

export const COMMAND_OPTIONS: readonly (readonly [string, string])[] = [['', 'any'], ...['ADD', 'DEL', 'CHECK', 'VERSION', 'GC', 'STATUS'].map((c) => [c, c] as const)];
export const FAILED_OPTIONS: readonly (readonly [string, string])[] = [
  ['', 'any'],
  ['true', 'failed'],
  ['false', 'succeeded'],
];

/** The filters the live tail and the calls page share, as the API's tail and /calls take them. */
export const CALL_FILTER_SPECS: readonly FieldSpec[] = [
  { name: 'namespace', label: 'Namespace' },
  { name: 'pod', label: 'Pod' },
  { name: 'command', label: 'Command', options: COMMAND_OPTIONS },
  { name: 'plugin', label: 'Plugin' },
  { name: 'failed', label: 'Outcome', options: FAILED_OPTIONS },
];

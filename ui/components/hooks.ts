/** Loading data for a page, and keyboard movement in its lists. */

import { useEffect, useRef, useState } from 'preact/hooks';
import { moveSelection } from '../model/list-keys.js';

export interface Loaded<T> {
  readonly data: T | null;
  readonly error: unknown;
  readonly loading: boolean;
  readonly reload: () => void;
}

/** Runs `load` whenever `key` changes; an answer to an older key is dropped. */
export function useLoad<T>(key: string, load: (signal: AbortSignal) => Promise<T>): Loaded<T> {
  const [state, setState] = useState<{ data: T | null; error: unknown; loading: boolean }>({ data: null, error: null, loading: true });
  const [round, setRound] = useState(0);
  useEffect(() => {
    const abort = new AbortController();
    setState((s) => ({ ...s, loading: true, error: null }));
    load(abort.signal).then(
      (data) => !abort.signal.aborted && setState({ data, error: null, loading: false }),
      (error: unknown) => !abort.signal.aborted && setState({ data: null, error, loading: false }),
    );
    return () => abort.abort();
    // `key` says when to load again: `load` is a new closure every render.
  }, [key, round]);
  return { ...state, reload: () => setRound((r) => r + 1) };
}

const typing = (target: EventTarget | null) =>
  target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT', 'BUTTON'].includes(target.tagName));

/**
 * j/k or the arrows move through `length` rows, Enter opens the selected one. Keys typed into a form
 * are left alone. The selected row is scrolled into view (rows carry data-row="index").
 */
export function useListKeys(length: number, open: (index: number) => void): number {
  const [selected, setSelected] = useState(-1);
  const ref = useRef({ selected, length, open });
  ref.current = { selected, length, open };
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.altKey || event.ctrlKey || event.metaKey || typing(event.target)) return;
      const { selected: current, length: n, open: openRow } = ref.current;
      if (event.key === 'Enter' && current >= 0 && current < n) {
        event.preventDefault();
        openRow(current);
        return;
      }
      const next = moveSelection(event.key, current, n);
      if (next === null) return;
      event.preventDefault();
      setSelected(next);
      document.querySelector(`[data-row="${next}"]`)?.scrollIntoView({ block: 'nearest' });
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
  return selected < length ? selected : -1;
}

/**
 * Steps that must never overlap (a watcher's startup scan, its rescans, the
 * changes it follows), run one after another in the order they were asked
 * for. A step that fails is reported and the next one still runs: a watcher
 * must not stall on one unreadable file. `after` runs after every step,
 * failed or not (the watchers publish what the step found).
 */
export interface SerialSteps {
  /** Runs `step` after every step asked for before it; settles when it has run (never rejects). */
  run(what: string, step: () => void | Promise<void>): Promise<void>;
  /** Settles once every step asked for so far has run. */
  idle(): Promise<void>;
}

export function createSerialSteps(onError: (err: unknown, what: string) => void, after: () => void = () => undefined): SerialSteps {
  let tail: Promise<void> = Promise.resolve();
  return {
    run(what, step) {
      tail = tail
        .then(step)
        .catch((err: unknown) => onError(err, what))
        .finally(after);
      return tail;
    },
    idle: () => tail,
  };
}

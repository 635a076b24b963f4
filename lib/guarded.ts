/**
 * A step whose failure must not stop its caller (a write the daemon can do
 * without, a read with a safe default): its error goes to `onError`, the
 * caller gets `fallback`. As with a topic's subscribers, one failure is
 * reported and everything else goes on.
 */

export type Guard = <T>(what: () => T, fallback: T) => T;

export function createGuard(onError: (err: unknown) => void): Guard {
  return (what, fallback) => {
    try {
      return what();
    } catch (err) {
      onError(err);
      return fallback;
    }
  };
}

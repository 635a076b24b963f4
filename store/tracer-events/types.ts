/** The tracer's own history as the store keeps it: what happened to the tracer, and when. */

export type TracerEventKind = 'started' | 'stopped' | 'restarted' | 'lost-events' | 'mode-changed' | (string & {});

export interface StoredTracerEvent {
  readonly id: number;
  readonly atUs: number;
  readonly kind: TracerEventKind;
  readonly detail: unknown;
}

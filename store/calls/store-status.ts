/** The store's write side as /healthz and /metrics show it: whether the database takes writes, and what waits. */
export interface StoreStatus {
  readonly writable: boolean;
  readonly lastError: string | null;
  /** When writes started failing (ISO 8601); null while they succeed. */
  readonly failingSince: string | null;
  readonly pendingWrites: number;
  readonly droppedWrites: number;
  readonly databaseBytes: number;
}

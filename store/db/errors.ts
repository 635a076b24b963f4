/**
 * The one error type the store lets out. Callers (the daemon, the CLI) print
 * `message` and exit or carry on: it names the file and what the user can do,
 * so nobody has to read a stack trace or an SQLite result code.
 */

export type StoreErrorCode =
  /** The directory or file cannot be created or written (permissions, read-only mount, a file where a directory should be). */
  | 'not-writable'
  /** SQLITE_FULL / ENOSPC: the disk (or quota) is full. */
  | 'disk-full'
  /** The file is not an SQLite database, or is one that another program owns. */
  | 'not-a-database'
  /** SQLite found damaged pages. */
  | 'corrupt'
  /** Another process holds the lock for longer than busy_timeout. */
  | 'busy'
  /** The file was migrated by a newer cnirec than this one. */
  | 'schema-too-new'
  /** A read or write failed below SQLite (EIO and friends). */
  | 'io'
  /** A pagination cursor that this store did not hand out. */
  | 'invalid-cursor'
  /** Anything else: a bug rather than something the user can fix. */
  | 'internal';

export class StoreError extends Error {
  override readonly name = 'StoreError';

  constructor(
    readonly code: StoreErrorCode,
    readonly file: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Codes worth retrying later: the data was fine, the disk or a lock was not. */
export function isTransientStoreError(err: unknown): boolean {
  return err instanceof StoreError && (err.code === 'disk-full' || err.code === 'busy' || err.code === 'io' || err.code === 'not-writable');
}

/** `SQLITE_IOERR_WRITE` → `SQLITE_IOERR`; Node's `ENOSPC` stays as it is. */
function primaryCode(err: unknown): string | null {
  if (typeof err !== 'object' || err === null || !('code' in err)) return null;
  const code = (err as { code: unknown }).code;
  if (typeof code !== 'string') return null;
  return code.startsWith('SQLITE_') ? code.replace(/^(SQLITE_[A-Z]+?)_.*$/, '$1') : code;
}

/**
 * Turns an SQLite or file-system error into a StoreError with a sentence a
 * user can act on. `doing` is a short phrase ("open", "write calls to").
 * StoreErrors pass through unchanged so wrapping twice is harmless.
 */
export function toStoreError(err: unknown, file: string, doing: string): StoreError {
  if (err instanceof StoreError) return err;
  if (typeof err === 'object' && err !== null && 'code' in err && err.code === 'SQLITE_READONLY_DBMOVED') {
    // SQLite refuses to write a file that was renamed or deleted under it: writing would go nowhere.
    return new StoreError('not-writable', file, `Cannot ${doing} the database ${file} because the file was moved or deleted while cnirec had it open; put it back, or restart cnirec to start a new one there.`, { cause: err });
  }
  const code = primaryCode(err);
  const make = (c: StoreErrorCode, message: string) => new StoreError(c, file, message, { cause: err });
  switch (code) {
    case 'SQLITE_FULL':
    case 'ENOSPC':
    case 'EDQUOT':
      return make('disk-full', `Cannot ${doing} the database ${file} because its disk is full; free some space or choose a database path on another disk.`);
    case 'SQLITE_NOTADB':
      return make('not-a-database', `The file ${file} is not an SQLite database; move it away or choose another database path.`);
    case 'SQLITE_CORRUPT':
      return make('corrupt', `The database ${file} is damaged; move it (and its -wal and -shm files) away so cnirec can start a new one.`);
    case 'SQLITE_BUSY':
    case 'SQLITE_LOCKED':
      return make('busy', `The database ${file} is locked by another process; stop the other cnirec daemon or choose another database path.`);
    case 'SQLITE_READONLY':
    case 'SQLITE_PERM':
    case 'SQLITE_CANTOPEN':
    case 'SQLITE_AUTH':
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return make('not-writable', `Cannot ${doing} the database ${file} because it or its directory is not writable; fix the permissions or choose another database path.`);
    case 'ENOTDIR':
      return make('not-writable', `Cannot ${doing} the database ${file} because part of its path is a file, not a directory; choose another database path.`);
    case 'EISDIR':
      return make('not-writable', `Cannot ${doing} the database ${file} because it is a directory; give the path of a file inside it instead.`);
    case 'SQLITE_IOERR':
    case 'EIO':
      return make('io', `Cannot ${doing} the database ${file} because the disk reported an I/O error; check the disk or choose another database path.`);
    default: {
      const detail = err instanceof Error ? err.message : String(err);
      return make('internal', `Cannot ${doing} the database ${file}: ${detail}.`);
    }
  }
}

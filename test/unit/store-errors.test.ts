// Every failure a user can fix becomes a StoreError with one sentence that
// names the file and says what to do.
import { describe, expect, it } from 'vitest';
import { StoreError, isTransientStoreError, toStoreError, type StoreErrorCode } from '../../store/db/errors.js';

const FILE = '/var/lib/cnirec/calls.db';
const withCode = (code: string, message = code) => Object.assign(new Error(message), { code });

describe('toStoreError', () => {
  it.each<[string, StoreErrorCode, RegExp]>([
    ['SQLITE_FULL', 'disk-full', /disk is full; free some space/],
    ['ENOSPC', 'disk-full', /disk is full/],
    ['SQLITE_NOTADB', 'not-a-database', /is not an SQLite database; move it away/],
    ['SQLITE_CORRUPT', 'corrupt', /is damaged; move it/],
    ['SQLITE_CORRUPT_INDEX', 'corrupt', /is damaged/],
    ['SQLITE_BUSY', 'busy', /locked by another process; stop the other cnirec daemon/],
    ['SQLITE_BUSY_SNAPSHOT', 'busy', /locked/],
    ['SQLITE_READONLY', 'not-writable', /not writable; fix the permissions/],
    ['SQLITE_READONLY_DBMOVED', 'not-writable', /was moved or deleted while cnirec had it open; put it back/],
    ['SQLITE_CANTOPEN', 'not-writable', /not writable/],
    ['EACCES', 'not-writable', /not writable/],
    ['EROFS', 'not-writable', /not writable/],
    ['ENOTDIR', 'not-writable', /part of its path is a file/],
    ['EISDIR', 'not-writable', /it is a directory/],
    ['SQLITE_IOERR_WRITE', 'io', /I\/O error; check the disk/],
    ['SQLITE_CONSTRAINT_CHECK', 'internal', /CHECK failed/],
  ])('turns %s into %s with an actionable sentence', (code, expected, message) => {
    const err = toStoreError(withCode(code, 'CHECK failed'), FILE, 'write calls to');
    expect(err).toBeInstanceOf(StoreError);
    expect(err.code).toBe(expected);
    expect(err.file).toBe(FILE);
    expect(err.message).toContain(FILE);
    expect(err.message).toMatch(message);
    expect(err.message).toMatch(/^Cannot write calls to the database |^The (file|database) /);
    expect(err.message.endsWith('.')).toBe(true);
  });

  it('keeps the original error as the cause', () => {
    const original = withCode('SQLITE_FULL');
    expect(toStoreError(original, FILE, 'open').cause).toBe(original);
  });

  it('passes a StoreError through unchanged', () => {
    const err = new StoreError('busy', FILE, 'already explained');
    expect(toStoreError(err, '/elsewhere', 'open')).toBe(err);
  });

  it('copes with things thrown that are not errors', () => {
    expect(toStoreError('boom', FILE, 'open')).toMatchObject({ code: 'internal', message: `Cannot open the database ${FILE}: boom.` });
  });
});

describe('isTransientStoreError', () => {
  it.each<[StoreErrorCode, boolean]>([
    ['disk-full', true],
    ['busy', true],
    ['io', true],
    ['not-writable', true],
    ['internal', false],
    ['corrupt', false],
    ['not-a-database', false],
  ])('says %s is worth retrying: %s', (code, expected) => {
    expect(isTransientStoreError(new StoreError(code, FILE, 'x'))).toBe(expected);
  });

  it('says an error that is not a StoreError is not', () => {
    expect(isTransientStoreError(withCode('SQLITE_FULL'))).toBe(false);
  });
});

// The one list of a call's columns matches the migrated schema, and what it derives reads back what was written.
import { describe, expect, it } from 'vitest';
import type { CniCall, CollectorEvent, HelperProcess } from '../../collector/types.js';
import { CALL_TABLE, HELPER_TABLE, type AnyColumn } from '../../store/calls/call-columns.js';
import { FULL_COLUMNS, HELPER_SUMMARY_COLUMNS, SUMMARY_COLUMNS, summaryOfCall } from '../../store/calls/call-decode.js';
import { createCallStore } from '../../store/calls/call-store.js';
import { openDatabase } from '../../store/db/open-database.js';

const stream = (s: string, redactions?: string[]) => ({ bytes: Buffer.from(s), totalBytes: s.length + 2, truncated: true, ...(redactions ? { redactions } : {}) });
const outcome = { exitCode: 1, signal: null, coreDumped: false };
const helper: HelperProcess = { pid: 7, ppid: 6, path: '/sbin/ip', argv: ['ip', 'link'], startedAtUs: 1_000.5, endedAtUs: 2_000.5, outcome, stdout: stream('o'), stderr: stream('e') };
const call: CniCall = {
  id: 'id-1', pid: 6, processStart: '99', ppid: 5, parentId: null, parentProcess: { pid: 5, comm: 'crio', exe: '/usr/bin/crio' },
  path: '/opt/cni/bin/bridge', plugin: 'bridge', argv: ['bridge'], env: { CNI_COMMAND: 'ADD' }, command: 'ADD', containerId: 'ctr',
  netns: '/ns', ifname: 'eth0', cniArgs: 'K=V', pod: { namespace: 'ns', name: 'pod', uid: 'uid', infraContainerId: 'infra' },
  traceParent: 'tp', isVersionProbe: false, startedAtUs: 1_763_750_000_000_010.5, endedAtUs: 1_763_750_000_000_020.25, durationUs: 9.3, outcome,
  status: 'finished', incompleteReason: null, captureMode: 'full', lostRecords: true, lostRecordsCause: 'tracer-lost', stdioShared: true, uncapturedIo: 2,
  stdin: stream('{"password":"[redacted]"}', ['/password']), stdout: stream('out'), stderr: stream(''), helpers: [helper],
};

function tableInfo(table: string) {
  const db = openDatabase(':memory:');
  try {
    return db.prepare(`SELECT name, type, "notnull" FROM pragma_table_info('${table}')`).all() as { name: string; type: string; notnull: number }[];
  } finally {
    db.close();
  }
}

const declared = (table: readonly AnyColumn[]) => table.map((c) => ({ name: c.name, type: c.type.sql, notnull: c.type.notNull ? 1 : 0 }));
const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : 1);

describe('the column lists', () => {
  it('declare every column of the migrated calls table, with its type and nullability', () => {
    expect(declared(CALL_TABLE).sort(byName)).toEqual(tableInfo('calls').sort(byName));
  });

  it('declare every column of the migrated helpers table but its rowid', () => {
    const migrated = tableInfo('helpers').filter((c) => c.name !== 'id');
    expect(declared(HELPER_TABLE).sort(byName)).toEqual(migrated.sort(byName));
  });

  it('read lists without payloads, argv or env, and streams by their length', () => {
    expect(SUMMARY_COLUMNS).not.toMatch(/\b(argv_json|env_json|cni_args|redactions_json)\b/);
    expect(SUMMARY_COLUMNS).toContain('length(stdin) AS stdin_stored');
    expect(HELPER_SUMMARY_COLUMNS).toContain('length(stderr) AS stderr_stored');
    expect(FULL_COLUMNS.split(', ')).toEqual(CALL_TABLE.map((c) => c.name));
  });
});

describe('a call through the column lists', () => {
  const db = openDatabase(':memory:');
  const store = createCallStore(db);
  const events: CollectorEvent[] = [{ type: 'call.finished', call }];
  store.writeEvents(events);

  it('reads back in full what was written', () => {
    const got = store.getCall(call.id)!;
    expect(got).toMatchObject({ id: 'id-1', cniArgs: 'K=V', argv: ['bridge'], env: { CNI_COMMAND: 'ADD' }, podInfraContainerId: 'infra', parentComm: 'crio' });
    expect(got).toMatchObject({ startedAtUs: 1_763_750_000_000_010, endedAtUs: 1_763_750_000_000_020, durationUs: 9, ok: false, coreDumped: false, lostRecords: true, lostRecordsCause: 'tracer-lost' });
    expect(got.stdin).toEqual({ bytes: Buffer.from('{"password":"[redacted]"}'), totalBytes: 27, truncated: true, redactions: ['/password'] });
    expect(got.stdout).toEqual({ bytes: Buffer.from('out'), totalBytes: 5, truncated: true });
    expect(got.helpers).toEqual([
      { callId: 'id-1', seq: 0, pid: 7, ppid: 6, path: '/sbin/ip', argv: ['ip', 'link'], startedAtUs: 1_000, endedAtUs: 2_000, exitCode: 1, signal: null, coreDumped: false, stdout: { bytes: Buffer.from('o'), totalBytes: 3, truncated: true }, stderr: { bytes: Buffer.from('e'), totalBytes: 3, truncated: true } },
    ]);
  });

  it('gives a live call the summary the store reads back once it is written', () => {
    const [stored] = store.listCalls({}, 10).items;
    expect(summaryOfCall(call)).toEqual(stored);
    expect(summaryOfCall(call).stdin).toEqual({ storedBytes: 25, totalBytes: 27, truncated: true });
  });

  it('gives a running call the summary of its started row', () => {
    const running: CniCall = { ...call, id: 'id-2', status: 'running', endedAtUs: null, durationUs: null, outcome: null, helpers: [] };
    store.writeEvents([{ type: 'call.started', call: running }]);
    const stored = store.listCalls({ status: 'running' }, 10).items[0];
    expect(summaryOfCall(running)).toEqual(stored);
    expect(summaryOfCall(running)).toMatchObject({ ok: null, coreDumped: null, exitCode: null, endedAtUs: null });
  });
});

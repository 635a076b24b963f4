// The values bound to the INSERTs line up with their columns.
import { describe, expect, it } from 'vitest';
import type { CniCall, HelperProcess } from '../../collector/types.js';
import { CALL_COLUMNS, FINISH_COLUMNS, HELPER_COLUMNS, callRow, callValues, finishValues, helperRow, helperValues } from '../../store/calls/call-rows.js';
import { openDatabase } from '../../store/db/open-database.js';

const stream = (s: string) => ({ bytes: Buffer.from(s), totalBytes: s.length + 1, truncated: true });
const outcome = { exitCode: 2, signal: null, coreDumped: false };
const helper: HelperProcess = { pid: 7, ppid: 6, path: '/sbin/ip', argv: ['ip'], startedAtUs: 1.5, endedAtUs: 2.5, outcome, stdout: stream('o'), stderr: stream('e') };
const call: CniCall = {
  id: 'id-1', pid: 6, processStart: '99', ppid: 5, parentId: 'parent', parentProcess: { pid: 5, comm: 'crio', exe: '/usr/bin/crio' },
  path: '/opt/cni/bin/bridge', plugin: 'bridge', argv: ['bridge'], env: { CNI_COMMAND: 'ADD' }, command: 'ADD', containerId: 'ctr',
  netns: '/ns', ifname: 'eth0', cniArgs: 'K=V', pod: { namespace: 'ns', name: 'pod', uid: 'uid', infraContainerId: 'infra' },
  traceParent: 'tp', isVersionProbe: false, startedAtUs: 10.9, endedAtUs: 20.2, durationUs: 9.3, outcome, status: 'finished',
  incompleteReason: null, captureMode: 'full', lostRecords: true, lostRecordsCause: 'tracer-lost', stdioShared: false, uncapturedIo: 0, stdin: stream('in'), stdout: stream('out'), stderr: stream('err'), helpers: [helper],
};

describe('call rows', () => {
  it('list their values in CALL_COLUMNS order, which the positional INSERT relies on', () => {
    expect(Object.keys(callRow(call))).toEqual([...CALL_COLUMNS]);
    expect(callValues(call)).toEqual(CALL_COLUMNS.map((c) => callRow(call)[c]));
  });

  it('list helper values in HELPER_COLUMNS order', () => {
    expect(Object.keys(helperRow('id-1', 0, helper))).toEqual([...HELPER_COLUMNS]);
    expect(helperValues('id-1', 3, helper)).toEqual(HELPER_COLUMNS.map((c) => helperRow('id-1', 3, helper)[c]));
  });

  it('list finish values in FINISH_COLUMNS order, then the id', () => {
    expect(finishValues(call)).toEqual([...FINISH_COLUMNS.map((c) => callRow(call)[c]), 'id-1']);
  });

  it('cover every column of the calls and helpers tables, and nothing else', () => {
    const db = openDatabase(':memory:');
    const columns = (table: string) => (db.prepare(`SELECT name FROM pragma_table_info('${table}')`).all() as { name: string }[]).map((r) => r.name);
    expect([...CALL_COLUMNS].sort()).toEqual(columns('calls').sort());
    expect(['id', ...HELPER_COLUMNS].sort()).toEqual(columns('helpers').sort());
    db.close();
  });

  it.each<[string, Partial<CniCall>, Record<string, unknown>]>([
    ['a clean exit is ok', { outcome: { exitCode: 0, signal: null, coreDumped: false } }, { ok: 1, exit_code: 0, signal: null, core_dumped: 0 }],
    ['a non-zero exit is not ok', {}, { ok: 0, exit_code: 2 }],
    ['a signal is not ok', { outcome: { exitCode: null, signal: 9, coreDumped: true } }, { ok: 0, signal: 9, core_dumped: 1 }],
    ['no outcome is unknown', { outcome: null }, { ok: null, exit_code: null, signal: null, core_dumped: null }],
    ['booleans become 0/1', { isVersionProbe: true }, { is_version_probe: 1, lost_records: 1, stdin_truncated: 1 }],
    ['times become whole microseconds', {}, { started_at_us: 10, ended_at_us: 20, duration_us: 9 }],
    ['the pod and parent are flattened', {}, { pod_namespace: 'ns', pod_name: 'pod', pod_uid: 'uid', pod_infra_container_id: 'infra', parent_pid: 5, parent_comm: 'crio' }],
    ['payloads stay Buffers', {}, { stdin: Buffer.from('in'), stdin_total: 3 }],
  ])('map %s', (_name, override, expected) => {
    expect(callRow({ ...call, ...override })).toMatchObject(expected);
  });
});

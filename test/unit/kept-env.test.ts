/**
 * The kept env entries (CNI_*, TRACEPARENT, TRACESTATE) the tracer sends
 * apart from the argv+env block: their lines (E, S, V), how the sequencer
 * waits for them, and the call's env and envTruncated from them.
 */

import { describe, expect, it } from 'vitest';
import { ENV_ENTRY_CAP_BYTES, ENV_SLOTS, expectedChunks, parseTracerLine, type TracerRecord } from '../../bpf/tracer-protocol.js';
import { RecordSequencer } from '../../collector/tracer/record-sequencer.js';
import { ReorderWindow } from '../../collector/tracer/reorder-window.js';
import { replay } from '../support/replay.js';
import { SAMPLE_CNI_ENV, execLines, exitLine, helloLine, hex, keptEnvEntryLines } from '../support/tracer-lines.js';

const ms = 1_000_000;

function parsed(line: string): TracerRecord {
  const r = parseTracerLine(line);
  if (!r.ok) throw new Error(r.error.message);
  return r.record;
}

describe('the kept env lines', () => {
  it('parses E, S and V as bpf/cnirec.bt prints them (a V chunk from before its entry too)', () => {
    // Real lines of the tracer: a /bin/true exec'd with 300 variables before six CNI_* ones.
    expect(parsed('E 10986 6')).toEqual({ kind: 'env-scan', pid: 10986, found: 6 });
    expect(parsed('S 10986 4 8051')).toEqual({ kind: 'env-entry', pid: 10986, slot: 4, len: 8051 });
    const data = Buffer.alloc(200, 0x61);
    expect(parsed(`V 10986 0 -185 ${hex(data)}`)).toEqual({ kind: 'env-chunk', pid: 10986, slot: 0, off: -185, data });
    expect(parsed(`V 10986 4 7851 ${hex(data)}`)).toMatchObject({ kind: 'env-chunk', slot: 4, off: 7851 });
  });

  it('refuses them malformed', () => {
    for (const line of ['E 1', 'E 1 2 3', 'S 1 2', 'S 1 2 -3', 'V 1 2 3', `V 1 x 0 ${hex(Buffer.alloc(200))}`, 'V 1 0 0 \\x4']) {
      expect(parseTracerLine(line).ok, line).toBe(false);
    }
  });

  it('counts the lines each announces: S lines for the slots sent, V chunks up to the cap', () => {
    expect(expectedChunks({ kind: 'env-scan', pid: 1, found: 6 })).toBe(6);
    expect(expectedChunks({ kind: 'env-scan', pid: 1, found: 40 })).toBe(ENV_SLOTS);
    expect(expectedChunks({ kind: 'env-entry', pid: 1, slot: 0, len: 15 })).toBe(1);
    expect(expectedChunks({ kind: 'env-entry', pid: 1, slot: 0, len: 8051 })).toBe(41);
    expect(expectedChunks({ kind: 'env-entry', pid: 1, slot: 0, len: 100 * 1024 })).toBe(Math.ceil(ENV_ENTRY_CAP_BYTES / 200));
    const lines = keptEnvEntryLines(1, 0, Buffer.alloc(100 * 1024, 0x41));
    expect(lines.length - 1).toBe(expectedChunks(parsed(lines[0]!)));
  });
});

describe('the sequencer and the kept env lines', () => {
  it('holds an exec until the V chunks its E and S lines announced are in, after its B chunks', () => {
    const seq = new RecordSequencer(new ReorderWindow({ minUs: 50_000, maxUs: 50_000, factor: 0, horizonUs: 1_000_000 }));
    const lines = execLines({ ts: 10 * ms, pid: 7, ppid: 1, start: 9 * ms, path: '/opt/cni/bin/bridge', env: { CNI_COMMAND: 'ADD', CNI_ARGS: 'x'.repeat(500) }, keptEnv: true });
    expect(lines.map((l) => l[0])).toEqual(['X', 'E', 'B', 'B', 'B', 'S', 'V', 'S', 'V', 'V', 'V']);
    const T = 10_000;
    const out: TracerRecord[] = [];
    for (const line of lines.slice(0, -1)) out.push(...seq.push(parsed(line), T + 100_000));
    // Long past the window: only the last V chunk is missing.
    out.push(...seq.releaseByClock(T + 200_000));
    expect(out).toEqual([]);
    out.push(...seq.push(parsed(lines.at(-1)!), T + 200_000));
    out.push(...seq.releaseByClock(T + 300_000));
    expect(out.map((r) => r.kind)).toEqual(['exec', 'env-scan', 'exec-chunk', 'exec-chunk', 'exec-chunk', 'env-entry', 'env-chunk', 'env-entry', 'env-chunk', 'env-chunk', 'env-chunk']);
  });
});

describe('the call env from the kept env lines', () => {
  const CNI = SAMPLE_CNI_ENV;
  /** 300 variables (over 20 KiB) with a secret among them. */
  const BIG: Record<string, string> = {};
  for (let i = 0; i < 300; i++) BIG[`SVC_${i}_SERVICE_HOST`] = `10.96.0.${i % 256}-${'h'.repeat(50)}`;
  BIG.MY_API_TOKEN = 'hunter2';

  function callFor(env: Record<string, string>, keptEnv: boolean, edit: (lines: string[]) => string[] = (l) => l) {
    const r = replay([
      helloLine('full'),
      ...edit(execLines({ ts: 10 * ms, pid: 100, ppid: 1, start: 9 * ms, path: '/opt/cni/bin/bridge', env, keptEnv })),
      exitLine({ ts: 20 * ms, pid: 100, start: 9 * ms }),
    ]);
    expect(r.parseErrors).toEqual([]);
    expect(r.finished).toHaveLength(1);
    return r.finished[0]!;
  }

  it('takes CNI_* whole from after a block over 16 KiB, and keeps nothing else', () => {
    const call = callFor({ ...BIG, ...CNI, TRACEPARENT: '00-aa-bb-01' }, true);
    expect(call.env).toEqual({ ...CNI, TRACEPARENT: '00-aa-bb-01' });
    expect(call).toMatchObject({ command: 'ADD', containerId: 'c1', netns: '/var/run/netns/x', ifname: 'eth0', pod: { namespace: 'ns', name: 'p' } });
    expect(call.envTruncated).toBe(false);
    expect(JSON.stringify(call)).not.toContain('hunter2');
  });

  it('keeps an 8 KiB CNI_ARGS whole after 8 KiB of env', () => {
    const pad: Record<string, string> = {};
    for (let i = 0; i < 100; i++) pad[`PAD_${i}`] = 'p'.repeat(80);
    const args = `K8S_POD_NAMESPACE=ns;K8S_POD_NAME=big;X=${'y'.repeat(8 * 1024)}`;
    const call = callFor({ ...pad, ...CNI, CNI_ARGS: args }, true);
    expect(call.env.CNI_ARGS).toBe(args);
    expect(call.pod).toMatchObject({ namespace: 'ns', name: 'big' });
    expect(call.envTruncated).toBe(false);
  });

  it('marks the env truncated when an entry is over the cap, and keeps its beginning', () => {
    const args = `K8S_POD_NAMESPACE=ns;K8S_POD_NAME=p;X=${'y'.repeat(100 * 1024)}`;
    const call = callFor({ ...CNI, CNI_ARGS: args }, true);
    expect(call.envTruncated).toBe(true);
    expect(call.env.CNI_ARGS).toBe(args.slice(0, ENV_ENTRY_CAP_BYTES - 'CNI_ARGS='.length));
    expect(call.command).toBe('ADD');
  });

  it('marks it truncated when there were more kept entries than slots, or a V chunk was lost', () => {
    const more: Record<string, string> = { ...CNI };
    for (let i = 0; Object.keys(more).length <= ENV_SLOTS; i++) more[`CNI_EXTRA_${i}`] = 'x';
    const over = callFor(more, true);
    expect(over.envTruncated).toBe(true);
    expect(Object.keys(over.env)).toHaveLength(ENV_SLOTS);

    let dropped = false;
    const lost = callFor({ ...CNI, CNI_ARGS: 'x'.repeat(1000) }, true, (lines) =>
      lines.filter((l) => dropped || !l.startsWith('V 100 4 ') || !(dropped = true)),
    );
    expect(lost.envTruncated).toBe(true);
  });

  it('does not mark a small env truncated', () => {
    expect(callFor({ PATH: '/usr/bin', ...CNI }, true)).toMatchObject({ envTruncated: false, env: CNI });
  });

  it('reads the env from the block in output without E lines (a tracer from before them)', () => {
    const small = callFor({ PATH: '/usr/bin', ...CNI }, false);
    expect(small).toMatchObject({ envTruncated: false, env: CNI, command: 'ADD' });
    // There, a block over 64 KiB is cut, and said to be.
    const big = callFor({ ...BIG, PAD: 'x'.repeat(70 * 1024), ...CNI }, false);
    expect(big.envTruncated).toBe(true);
    expect(big.command).toBeNull();
  });
});

/**
 * Writes tracer output in the exact line protocol for N plugin calls shaped
 * like a typical ADD (exec + ~2 KiB config on stdin + ~500 B result on
 * stdout + exit), chunked exactly as bpf/cnirec.bt chunks them.
 *
 * Timestamps (ns, as bpftrace prints `nsecs`) advance 50 µs per call: the
 * stream looks like a node running 20,000 plugin calls a second, the
 * ingest target, so the record sequencer holds as many calls in its window
 * as it would on such a node.
 */

import { CHUNK_BYTES } from '../../bpf/tracer-protocol.js';

export interface SyntheticCallShape {
  stdinBytes: number;
  stdoutBytes: number;
}

export function* syntheticTrace(calls: number, shape: SyntheticCallShape): Generator<string> {
  yield `H 1 full 1000000000`;
  let ts = 1_000_000_000_000;
  const stdin = Buffer.from(JSON.stringify({ cniVersion: '1.0.0', name: 'bench', type: 'bridge', pad: 'x'.repeat(shape.stdinBytes) }).slice(0, shape.stdinBytes));
  const stdout = Buffer.from(JSON.stringify({ cniVersion: '1.0.0', ips: [{ address: '10.0.0.2/24' }], pad: 'y'.repeat(shape.stdoutBytes) }).slice(0, shape.stdoutBytes));
  for (let i = 0; i < calls; i++) {
    const pid = 100_000 + (i % 4_000_000);
    const start = String(ts);
    const argv = Buffer.from('/opt/cni/bin/bridge\0');
    const env = Buffer.from(
      [
        'CNI_COMMAND=ADD',
        `CNI_CONTAINERID=${i.toString(16).padStart(64, '0')}`,
        `CNI_NETNS=/var/run/netns/cni-${i}`,
        'CNI_IFNAME=eth0',
        `CNI_ARGS=IgnoreUnknown=1;K8S_POD_NAMESPACE=bench;K8S_POD_NAME=pod-${i % 1000};K8S_POD_UID=${i}`,
        'CNI_PATH=/opt/cni/bin',
        'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        '',
      ].join('\0'),
    );
    const block = Buffer.concat([argv, env]);
    yield `X ${ts} ${pid} 4242 ${start} 71 72 73 ${argv.length} ${block.length} /opt/cni/bin/bridge`;
    yield* chunks('B', pid, block, true);
    ts += 10_000;
    yield `R ${ts} ${pid} ${pid} 0 71 ${stdin.length}`;
    yield* chunks('D', pid, stdin, false);
    ts += 20_000;
    yield `W ${ts} ${pid} ${pid} 1 72 ${stdout.length}`;
    yield* chunks('D', pid, stdout, false);
    ts += 10_000;
    yield `Q ${ts} ${pid} ${start} 0 0 4`;
    ts += 10_000;
  }
}

function* chunks(kind: 'B' | 'D', id: number, data: Buffer, padBefore: boolean): Generator<string> {
  const total = data.length;
  for (let off = 0; off < total; off += CHUNK_BYTES) {
    // Like the tracer: the last chunk is the 200 bytes that end the payload.
    const start = off + CHUNK_BYTES > total ? (total >= CHUNK_BYTES || padBefore ? total - CHUNK_BYTES : off) : off;
    const bytes = Buffer.alloc(CHUNK_BYTES);
    for (let j = 0; j < CHUNK_BYTES; j++) {
      const k = start + j;
      bytes[j] = k >= 0 && k < total ? data[k]! : 0;
    }
    yield `${kind} ${id} ${start} ${hex(bytes)}`;
  }
}

function hex(buf: Buffer): string {
  let out = '';
  for (const b of buf) out += `\\x${b.toString(16).padStart(2, '0')}`;
  return out;
}

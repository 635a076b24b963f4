import { describe, expect, it } from 'vitest';
import { parseTracerLine } from '../../../bpf/tracer-protocol.js';
import { callChanges, NetlinkDecodeError, type KernelEntry } from '../../../collector/changes/index.js';
import { parseAttributes, parseMessages } from '../../../collector/changes/netlink.js';
import { decodeRtRequest } from '../../../collector/changes/rtnetlink.js';
import { RecordFramer, type Framed } from '../../../collector/tracer/record-framer.js';
import { traceLines } from '../../support/replay.js';

/** The requests of the recorded bridge ADD, whole, as their L and M lines carried them (framed as the collector frames them). */
function recordedRequests(): Buffer[] {
  const framer = new RecordFramer();
  const frames: Framed[] = [];
  for (const l of traceLines('changes-bridge-full.trace')) {
    const r = parseTracerLine(l);
    if (r.ok) framer.push(r.record, 0, frames);
  }
  framer.closeAll(frames);
  return frames.flatMap(({ frame: f }) => (f.kind === 'netlink-send' ? [f.bytes] : []));
}

const name = (i: number): string => `if${i}`;

describe('netlink decoders on the recorded requests', () => {
  const requests = recordedRequests();

  it('reads every recorded request', () => {
    expect(requests.length).toBeGreaterThan(20);
    for (const b of requests) for (const m of parseMessages(b)) expect(() => decodeRtRequest(m, name)).not.toThrow();
  });

  it('reads the veth pair request (made in the pod netns, its peer named)', () => {
    const veth = requests.map((b) => parseMessages(b)[0]!).map((m) => decodeRtRequest(m, name)).find((c) => c?.attributes.kind === 'veth');
    expect(veth).toMatchObject({ object: 'link', action: 'add', subject: 'eth0 type veth peer vethc738f8b2' });
  });

  it("leaves out iproute2's opening probe (an empty RTM_NEWLINK: no link named, none created), and reads its `link set up`", () => {
    // As `ip` 6.1 sent them with sendmsg (taken from the tracer's M lines).
    const probe = Buffer.from('200000001000050000000000000000000000000000000000000000000000000000', 'hex').subarray(0, 32);
    expect(decodeRtRequest(parseMessages(probe)[0]!, name)).toBeNull();
    const up = Buffer.from('2000000010000500f7c90a6b00000000000000000300000001000000010000000', 'hex').subarray(0, 32);
    expect(decodeRtRequest(parseMessages(up)[0]!, name)).toMatchObject({ object: 'link', action: 'change', subject: 'if3 up' });
  });

  it('never crashes on a cut request: every prefix gives changes or a NetlinkDecodeError', () => {
    for (const b of requests) {
      for (let n = 0; n <= b.length; n++) {
        try {
          for (const m of parseMessages(b.subarray(0, n), b.length)) decodeRtRequest(m, name);
        } catch (err) {
          expect(err).toBeInstanceOf(NetlinkDecodeError);
        }
      }
    }
  });

  it('never crashes on hostile bytes: lengths that lie, zero-length attributes, random noise', () => {
    const hostile = [
      Buffer.from([0xff, 0xff, 0xff, 0xff, 16, 0, 5, 4, 1, 0, 0, 0, 0, 0, 0, 0]),
      Buffer.from([3, 0, 0, 0, 16, 0, 5, 4, 1, 0, 0, 0, 0, 0, 0, 0]),
      Buffer.concat([Buffer.from([36, 0, 0, 0, 16, 0, 5, 6, 1, 0, 0, 0, 0, 0, 0, 0]), Buffer.alloc(16), Buffer.from([0, 0, 3, 0])]),
      Buffer.alloc(3),
    ];
    let seed = 7;
    for (let i = 0; i < 2000; i++) {
      const b = Buffer.alloc(16 + (i % 80));
      for (let j = 0; j < b.length; j++) b[j] = (seed = (seed * 1103515245 + 12345) & 0x7fffffff) & 0xff;
      b.writeUInt32LE(b.length, 0);
      b.writeUInt16LE(16 + (i % 32), 4);
      hostile.push(b);
    }
    for (const b of hostile) {
      try {
        for (const m of parseMessages(b)) decodeRtRequest(m, name);
      } catch (err) {
        expect(err, String(err)).toBeInstanceOf(NetlinkDecodeError);
        expect((err as Error).message).toMatch(/bytes/);
      }
    }
  });

  it('keeps a hostile request in the call as undecodable, with the reason, and goes on', () => {
    const entries: KernelEntry[] = [
      { atUs: 1, rec: { kind: 'netlink-send', ts: 1, pid: 5, tid: 5, netns: '9', len: 16, bytes: Buffer.from([3, 0, 0, 0, 16, 0, 5, 4, 1, 0, 0, 0, 0, 0, 0, 0]), whole: true } },
    ];
    const [c] = callChanges(entries, [], { host: '9', pod: null, podPath: null });
    expect(c).toMatchObject({ netns: 'host', subject: '(undecodable netlink request of 16 bytes)', ok: null });
    expect(c!.attributes!.decodeError).toMatch(/less than its header/);
  });

  it('stops at an attribute cut by the capture instead of reading past it', () => {
    expect(parseAttributes(Buffer.from([8, 0, 3, 0, 0x65, 0x74]))).toEqual([]);
  });
});

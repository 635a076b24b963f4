// `cnirec show`: under the call's header, what its record may lack ("Record caveats:"), and the payloads said as they are.
import { describe, expect, it } from 'vitest';
import { recordCaveats } from '../../cli/call-caveats.js';
import { createOutput } from '../../cli/output.js';
import { formatCallDetail } from '../../cli/show-command.js';
import { callDetailView } from './cli-fixture.js';
import type { KernelChangeView } from '../../api/schemas/kernel.js';

/** What `cnirec show` writes to a pipe: the output writer's neutralised lines, without colour. */
function printed(lines: readonly string[]): string {
  let text = '';
  createOutput({ write: (chunk) => ((text += String(chunk)), true) }).lines(lines);
  return text;
}

const show = (...args: Parameters<typeof callDetailView>) => printed(formatCallDetail(callDetailView(...args)));

describe('the caveats of a record on cnirec show', () => {
  it('prints no block for a whole record', () => {
    expect(show()).not.toContain('Record caveats');
    expect(recordCaveats(callDetailView())).toEqual([]);
  });

  it('says each caveat that applies on its own line, after the header lines and before argv', () => {
    const call = callDetailView(
      {
        ok: false,
        exitCode: 1,
        error: 'no IP addresses available',
        captureMode: 'full',
        lostRecords: true,
        stdioShared: true,
        uncapturedIo: 2,
        envTruncated: true,
        pathTruncated: true,
        execChain: ['/opt/cni/bin/wrapper.sh', '/opt/cni/bin/bridge'],
        outputAfterExit: { stdout: null, stderr: 9 },
        stdin: { text: '', base64: '', bytes: 0, totalBytes: 20_057, truncated: true, redacted: false, redactedPointers: [] },
      },
      { stderr: 'log: one\nlog: late\n' },
    );
    const lines = printed(formatCallDetail(call)).split('\n');
    const at = lines.indexOf('Record caveats:');
    expect(at).toBeGreaterThan(0);
    expect(lines[at - 1]).toBe('error  no IP addresses available');
    const block = lines.slice(at + 1, lines.indexOf('', at));
    expect(block).toEqual([
      '  ! the tracer lost records while this call ran: payloads, helpers or delegated calls may be incomplete',
      '  ! not captured: 2 reads and writes moved bytes the tracer does not take (sendfile, splice, copy_file_range, sendmsg, iovecs past the 2nd…); missing: stdin 20,057 of 20,057 bytes',
      '  ! stdout and stderr were one file (a terminal, 2>&1) and some writes went through an fd that stood for neither: those are filed as stdout, and may be stderr',
      '  ! output after exit: descendants wrote stderr from byte 9 after the plugin exited (the caller still got it; marked in the stream)',
      "  ! exec'd in place: /opt/cni/bin/wrapper.sh → /opt/cni/bin/bridge",
      '  ! environment cut by the tracer: CNI_* values past the cut (command, container, pod) may be missing',
      '  ! path cut by the tracer: the plugin path shown is its beginning',
    ]);
    expect(lines[at + block.length + 2]).toBe('argv  /opt/cni/bin/bridge');
    // Lost records are said once, in the block, not also under the header.
    expect(lines.filter((l) => l.includes('lost records'))).toHaveLength(1);
  });

  it('says why a call marked lostRecords cannot be vouched for, when the daemon knows', () => {
    const cut = callDetailView({ captureMode: 'full', lostRecords: true, lostRecordsCause: 'payload-tracer-cut' });
    expect(recordCaveats(cut)).toEqual(['the tracer taking its bytes stopped while it ran (a capture mode switch or a tracer restart): payloads, helpers or delegated calls may be incomplete']);
    const dropped = callDetailView({ captureMode: 'full', lostRecords: true, lostRecordsCause: 'tracer-lost' });
    expect(recordCaveats(dropped)[0]).toMatch(/^the tracer dropped records while this call ran \(perf buffers full: raise --perf-buffer-pages/);
  });

  it('says a light call’s payloads were not recorded, rather than empty, and where its config went', () => {
    const light = callDetailView({ captureMode: 'light', configSource: 'cache', resultSource: 'cache' }, { stdin: '', stdout: '', stderr: '' });
    const text = show({ captureMode: 'light', configSource: 'cache', resultSource: 'cache' }, { stdin: '', stdout: '', stderr: '' });
    expect(recordCaveats(light)).toEqual(["light capture: stdin, stdout and stderr were not recorded (payloads were off for this call); its config and result from libcni's cache: -o json"]);
    expect(text).toContain('stdin  (not captured: light capture)');
    expect(text).toContain('stdout  (not captured: light capture)');
    expect(text).not.toContain('(empty)');
  });

  it('says how many bytes of a stream went by when none were taken, rather than empty', () => {
    const text = show({ uncapturedIo: 1, stdout: { text: '', base64: '', bytes: 0, totalBytes: 4096, truncated: true, redacted: false, redactedPointers: [] } });
    expect(text).toContain('stdout  (none captured of 4096 bytes)');
  });

  it('marks where output written after the plugin exited begins in the printed stream', () => {
    const text = show({ outputAfterExit: { stdout: 12, stderr: null } }, { stdout: '{"ok":true}\nlate line\n' });
    expect(text).toContain('{"ok":true}\n── written after the plugin exited, from byte 12 ──\nlate line\n');
  });

  it('says the byte where it cannot mark the text: redaction moved the bytes', () => {
    const call = callDetailView({ outputAfterExit: { stdout: 40, stderr: null } });
    const text = printed(formatCallDetail({ ...call, stdout: { ...call.stdout, redacted: true, redactedPointers: ['/token'] } }));
    expect(text).toContain('(from byte 40: written after the plugin exited)');
    expect(text).not.toContain('──');
  });

  it('shows the recorded names in an exec chain with their control characters as text', () => {
    const text = show({ execChain: ['/opt/cni/bin/w\u001b[2J\u202e.sh', '/opt/cni/bin/bridge'] });
    expect(text).toContain("exec'd in place: /opt/cni/bin/w\\x1b[2J\\u202e.sh → /opt/cni/bin/bridge");
    // eslint-disable-next-line no-control-regex -- no control character but newlines may survive
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u202e]/);
  });
});

describe('the kernel side of a call on cnirec show', () => {
  const change = (over: Partial<KernelChangeView> = {}): KernelChangeView => ({
    at: '2026-11-21T18:34:02.104Z',
    pid: 9,
    netns: 'host',
    object: 'link',
    action: 'add',
    subject: 'cni0 type bridge',
    ok: true,
    error: null,
    attributes: {},
    ...over,
  });

  it('says a light call did not capture changes, and still prints the kernel messages', () => {
    const text = show({ changes: null, captureMode: 'light', kernelMessages: [{ at: '2026-11-21T18:34:02.104Z', pid: 9, process: 'bridge', message: 'mtu greater than device maximum' }] });
    expect(text).toContain('changes  (not captured: light capture)');
    expect(text).toContain('kernel   bridge[9]: mtu greater than device maximum');
  });

  it('says "none" for a captured call that changed nothing', () => {
    expect(show({ changes: [] })).toContain('changes  (none: the call changed nothing in the kernel)');
  });

  it('groups changes by netns, the netns with a refusal first and the refusal at its top', () => {
    const text = show({
      changes: [
        change({ netns: '/var/run/netns/pod', object: 'address', subject: '10.96.7.2/24 dev eth0' }),
        change({ subject: 'vethab type veth peer eth0' }),
        change({ subject: 'cni1 type bridge mtu 70000', ok: false, error: { errno: 'EINVAL', message: 'mtu greater than device maximum' } }),
      ],
    });
    const lines = text.split('\n');
    const at = (s: string) => lines.findIndex((l) => l.includes(s));
    expect(text).toContain('changes  3, 1 refused');
    expect(at('  host')).toBeLessThan(at('  /var/run/netns/pod'));
    expect(at('cni1 type bridge mtu 70000')).toBeLessThan(at('vethab type veth peer eth0'));
    expect(lines[at('cni1 type bridge')]).toContain('+ link      cni1 type bridge mtu 70000  ✗ EINVAL: mtu greater than device maximum');
  });

  it('keeps hostile text from the record inert', () => {
    const text = show({ changes: [change({ subject: 'evil\u001b[2J\nname' })], kernelMessages: [{ at: '2026-11-21T18:34:02.104Z', pid: 9, process: 'x\u001b]0;t\u0007', message: 'm\u001b[31m' }] });
    expect(text).not.toContain('\u001b[2J');
    expect(text).not.toContain('\u001b]0');
    expect(text).not.toContain('\u001b[31m');
  });
});

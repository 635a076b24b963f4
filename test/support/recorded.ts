/**
 * What test/fixtures/traces/record.sh sent when it recorded the fixtures.
 * Keep in sync with the constants at the top of record.sh.
 */

import { ChunkedBuffer } from '../../collector/tracer/chunked-buffer.js';
import { parseTracerLine, EXEC_BLOCK_CAP_BYTES } from '../../bpf/tracer-protocol.js';

export const RECORDED = {
  containerId: '8f3c1b2a9d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8',
  podUid: '3b9f2c1e-6a7d-4e8f-9b0c-1d2e3f4a5b6c',
  podNamespace: 'demo',
  podName: 'web-0',
  cniArgs:
    'IgnoreUnknown=1;K8S_POD_NAMESPACE=demo;K8S_POD_NAME=web-0;K8S_POD_UID=3b9f2c1e-6a7d-4e8f-9b0c-1d2e3f4a5b6c;' +
    'K8S_POD_INFRA_CONTAINER_ID=8f3c1b2a9d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8',
  traceParent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  bridgePath: '/usr/lib/cni/bridge',
  hostLocalPath: '/usr/lib/cni/host-local',
  /** netns per scenario: cnirec-fx-<n>. */
  netns: (n: number): string => `/var/run/netns/cnirec-fx-${n}`,
  /** The fixture plugins' directory on the recording machine ends so. */
  pluginsDirSuffix: '/test/fixtures/plugins',
} as const;

/** Env names record.sh lets into a fixture (see ALLOWED_ENV there). */
export const ALLOWED_FIXTURE_ENV = /^(PATH|PWD|SHLVL|_|CNI_[A-Z_]+|TRACEPARENT|TRACESTATE|BYTES_CASE)$/;

/**
 * Every env entry name of every exec block in a trace, reassembled from its
 * chunks without the collector's filtering: to prove no foreign env leaked
 * into a committed fixture.
 */
export function rawEnvNames(lines: readonly string[]): Set<string> {
  const names = new Set<string>();
  const blocks = new Map<number, { buf: ChunkedBuffer; argBytes: number }>();
  const done = (pid: number): void => {
    const b = blocks.get(pid);
    if (!b) return;
    blocks.delete(pid);
    const env = b.buf.bytes().subarray(b.argBytes);
    for (const entry of env.toString('latin1').split('\0')) {
      if (entry.length === 0) continue;
      const eq = entry.indexOf('=');
      names.add(eq > 0 ? entry.slice(0, eq) : '(no name)');
    }
  };
  for (const line of lines) {
    const p = parseTracerLine(line);
    if (!p.ok) continue;
    const r = p.record;
    if (r.kind === 'exec') {
      done(r.pid);
      blocks.set(r.pid, { buf: new ChunkedBuffer(r.blockBytes, EXEC_BLOCK_CAP_BYTES), argBytes: r.argBytes });
    } else if (r.kind === 'exec-chunk') {
      blocks.get(r.pid)?.buf.add(r.off, r.data);
    }
  }
  for (const pid of [...blocks.keys()]) done(pid);
  return names;
}

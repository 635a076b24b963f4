import { it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../store/open-database.js';
import { createCallStore } from '../../store/call-store.js';
import type { CniCall, CollectorEvent } from '../../collector/types.js';

function call(i: number, base: number): CniCall {
  const started = base + i * 10;
  return {
    id: `${started.toString(36).padStart(11, '0')}-${(1000 + i).toString(36)}`,
    pid: 1000 + i, processStart: '1', ppid: 1, parentId: null, parentProcess: { pid: 1, comm: 'containerd', exe: '/usr/bin/containerd' },
    path: '/opt/cni/bin/bridge', plugin: 'bridge', argv: ['/opt/cni/bin/bridge'],
    env: { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c'.repeat(64), CNI_NETNS: '/var/run/netns/x', CNI_IFNAME: 'eth0', CNI_ARGS: 'K8S_POD_NAMESPACE=default;K8S_POD_NAME=p' + (i % 500) },
    command: 'ADD', containerId: 'c'.repeat(63) + (i % 10), netns: '/var/run/netns/x', ifname: 'eth0', cniArgs: 'K8S_POD_NAMESPACE=default;K8S_POD_NAME=p',
    pod: { namespace: 'default', name: 'p' + (i % 500), uid: 'uid-' + (i % 500), infraContainerId: null },
    traceParent: null, isVersionProbe: false, startedAtUs: started + 0.5, endedAtUs: null, durationUs: null, outcome: null,
    status: 'running', incompleteReason: null, captureMode: 'full', lostRecords: false,
    stdin: { bytes: Buffer.alloc(2048, 7), totalBytes: 2048, truncated: false },
    stdout: { bytes: Buffer.alloc(0), totalBytes: 0, truncated: false },
    stderr: { bytes: Buffer.alloc(0), totalBytes: 0, truncated: false },
    helpers: [],
  } as CniCall;
}

it('bench', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-'));
  const store = createCallStore(openDatabase(path.join(dir, 'x.db')));
  const base = Date.now() * 1000;
  const N = 100_000, B = Number(process.env.B ?? 500);
  const sameBatch = process.env.SAME === '1';
  const started = performance.now();
  for (let b = 0; b < N; b += B) {
    const s: CollectorEvent[] = [], f: CollectorEvent[] = [];
    for (let i = b; i < b + B; i++) {
      const c = call(i, base);
      s.push({ type: 'call.started', call: c });
      f.push({ type: 'call.finished', call: { ...c, status: 'finished', endedAtUs: c.startedAtUs + 1000, durationUs: 1000, outcome: { exitCode: i % 7 === 0 ? 1 : 0, signal: null, coreDumped: false }, stdout: { bytes: Buffer.alloc(500, 1), totalBytes: 500, truncated: false } } });
    }
    if (sameBatch) store.writeEvents([...s, ...f]); else { store.writeEvents(s); store.writeEvents(f); }
  }
  const secs = (performance.now() - started) / 1000;
  console.log(`${N} calls in ${secs.toFixed(2)}s = ${(N / secs).toFixed(0)} calls/s (batch ${B}, same=${sameBatch}); size ${(store.databaseSizeBytes()/1e6).toFixed(0)} MB`);
  store.close();
  fs.rmSync(dir, { recursive: true });
}, 300_000);

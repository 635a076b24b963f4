/**
 * The runtime's side benchmark: what asking the container runtime costs the
 * daemon on a big node, per poll (every 5 s by default, as the kubelet asks).
 *
 * A node with N pod sandboxes (labels and annotations as a kubelet sets
 * them), each with its libcni cache entry and host-local reservation in the
 * store, and N/100 leaked attachments (cache entry and reservation, no
 * sandbox). The daemon's own poller and tracker run over it: the runtime's
 * answers are real CRI protobuf bytes, decoded as the gRPC client decodes
 * them; the gRPC transport itself (HTTP/2 over a unix socket) is left out,
 * as is the runtime's own cost of answering.
 *
 * Measured per poll: wall time and the daemon's CPU time (all of it on the
 * event loop: the longest it is held), the tracker's share (the store's
 * side: sandboxes kept, attachments read, leaks judged), for
 * - the first poll (every sandbox new: stored, its details asked for 64 of them);
 * - the polls that ask the rest of the details (64 PodSandboxStatus a poll);
 * - steady polls (nothing changed);
 * - polls with churn (1 % of the sandboxes replaced by new ones).
 *
 *   npm run build && node dist/bench/runtime-side.js [--sandboxes 110,1000,10000] [--steady 20]
 *
 * Writes bench/results/runtime-side.json and bench/results/runtime-side.md.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sandboxesOf, sandboxStatusOf } from '../collector/runtime/cri-decode.js';
import { createRuntimePoller, criType, DECODE_OPTIONS, leakTimingFor, type CriClient, type RuntimeSnapshot } from '../collector/index.js';
import { createRuntimeTracker, openDatabase, type Database } from '../store/index.js';
import { distribution, round, type Distribution } from './lib/stats.js';

const RESULTS = path.resolve(import.meta.dirname, '../../bench/results');
const INTERVAL_MS = 5_000;
const NETWORK = 'bench-pods';

const { values: opts } = parseArgs({
  options: {
    sandboxes: { type: 'string', default: '110,1000,10000' },
    steady: { type: 'string', default: '20' },
  },
  strict: true,
});
const SIZES = opts.sandboxes.split(',').map(Number);
const STEADY = Number(opts.steady);

const hex = (i: number, salt: string) => `${salt}${i.toString(16)}`.padStart(64, '0');
const ipOf = (i: number) => `10.${64 + Math.floor(i / 65536)}.${Math.floor(i / 256) % 256}.${i % 256}`;

interface Pod {
  id: string;
  name: string;
  uid: string;
  ip: string;
}

const podOf = (i: number, salt = 'a'): Pod => ({ id: hex(i, salt), name: `web-${salt}-${i}`, uid: `uid-${salt}-${i}`, ip: ipOf(i) });

/** A sandbox as ListPodSandbox answers it (field names as the CRI's protobuf). */
const listed = (p: Pod, createdAtMs: number) => ({
  id: p.id,
  metadata: { name: p.name, uid: p.uid, namespace: 'default', attempt: 0 },
  state: 'SANDBOX_READY',
  created_at: String(createdAtMs * 1e6),
  labels: { 'io.kubernetes.pod.name': p.name, 'io.kubernetes.pod.namespace': 'default', 'io.kubernetes.pod.uid': p.uid, app: 'web', 'pod-template-hash': '7d9f8b6c5d' },
  annotations: { 'kubernetes.io/config.seen': '2026-11-29T00:00:00.000000000Z', 'kubernetes.io/config.source': 'api' },
  runtime_handler: '',
});

/** A client over the node's answers as protobuf bytes, decoded as cri-client.ts decodes what gRPC hands it. */
function clientOver(node: { pods: Pod[]; createdAtMs: number }): CriClient & { encodeList(): void } {
  const listType = criType('ListPodSandboxResponse');
  const statusType = criType('PodSandboxStatusResponse');
  const decode = (t: typeof listType, bytes: Uint8Array) => t.toObject(t.decode(bytes), DECODE_OPTIONS);
  let listBytes: Uint8Array = new Uint8Array();
  const statusBytes = new Map<string, Uint8Array>();
  const self = {
    endpoint: '/run/containerd/containerd.sock',
    encodeList() {
      listBytes = listType.encode(listType.fromObject({ items: node.pods.map((p) => listed(p, node.createdAtMs)) })).finish();
    },
    version: async () => ({ name: 'containerd', version: '1.6.20', apiVersion: 'v1' }),
    status: async () => ({ conditions: [{ type: 'RuntimeReady', status: true, reason: '', message: '' }, { type: 'NetworkReady', status: true, reason: '', message: '' }], info: {} }),
    listPodSandbox: async () => sandboxesOf(decode(listType, listBytes)),
    async podSandboxStatus(id: string) {
      let bytes = statusBytes.get(id);
      if (!bytes) {
        const p = node.pods.find((x) => x.id === id);
        if (!p) return null;
        const { runtime_handler: _, ...rest } = listed(p, node.createdAtMs);
        bytes = statusType.encode(statusType.fromObject({ status: { ...rest, network: { ip: p.ip, additional_ips: [] } } })).finish();
        statusBytes.set(id, bytes);
      }
      return sandboxStatusOf(decode(statusType, bytes));
    },
    takeDropped: () => false,
    close: () => undefined,
  };
  return self;
}

/** Each pod's (and each leak's) cache entry and reservation, as the cache watcher stores them. */
function storeAttachments(db: Database, pods: readonly Pod[], atMs: number): void {
  const entry = db.prepare(`INSERT INTO cache_entries (path, dir, format, container_id, network_name, if_name, netns, pod_namespace, pod_name, pod_uid, digest,
      file_mtime_ms, first_seen_ms, last_seen_ms, ips_json, cni_args_json, config_json)
    VALUES (?, '/var/lib/cni/results', 'cniCacheV1', ?, ?, 'eth0', ?, 'default', ?, ?, 'd', ?, ?, ?, ?, '[]', '{}')`);
  const reservation = db.prepare(`INSERT INTO ip_history (ip, network, container_id, if_name, pod_namespace, pod_name, source, path, from_ms)
    VALUES (?, ?, ?, 'eth0', 'default', ?, 'host-local', ?, ?)`);
  db.transaction(() => {
    for (const p of pods) {
      entry.run(`/var/lib/cni/results/${NETWORK}-${p.id}-eth0`, p.id, NETWORK, `/var/run/netns/cni-${p.id.slice(-8)}`, p.name, p.uid, atMs, atMs, atMs, JSON.stringify([p.ip]));
      reservation.run(p.ip, NETWORK, p.id, p.name, `/var/lib/cni/networks/${NETWORK}/${p.ip}`, atMs);
    }
  })();
}

interface Phase {
  readonly polls: number;
  readonly wallMs: Distribution;
  readonly cpuMs: Distribution;
  readonly trackerMs: Distribution;
}

interface SizeResult {
  readonly sandboxes: number;
  readonly leaked: number;
  readonly confirmedLeaks: number;
  /** Live sandboxes in the GC plan at the end: must be none. */
  readonly liveCalledLeaked: number;
  readonly first: Phase;
  readonly details: Phase;
  readonly steady: Phase;
  readonly churn: Phase;
  /** Steady CPU per poll over the poll interval: the share of one core the runtime's side takes. */
  readonly steadyCoreShare: number;
}

async function measure(n: number): Promise<SizeResult> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cnirec-bench-runtime-'));
  try {
    const db = openDatabase(path.join(dir, 'cnirec.db'));
    let clock = Date.parse('2026-11-29T00:00:00Z');
    const node = { pods: Array.from({ length: n }, (_, i) => podOf(i)), createdAtMs: clock - 3_600_000 };
    const leaks = Array.from({ length: Math.max(1, n / 100) }, (_, i) => podOf(n + i, 'b'));
    storeAttachments(db, [...node.pods, ...leaks], clock - 3_600_000);
    const client = clientOver(node);
    client.encodeList();
    const tracker = createRuntimeTracker(db, { timing: leakTimingFor(INTERVAL_MS), onError: (err) => console.error(err) });
    let trackerMs = 0;
    const poller = createRuntimePoller({ endpoint: { kind: 'fixed', path: client.endpoint }, intervalMs: INTERVAL_MS, now: () => clock, connect: () => client });
    poller.subscribe({
      onRuntimeSnapshot(s: RuntimeSnapshot) {
        const t = performance.now();
        tracker.onRuntimeSnapshot(s);
        trackerMs = performance.now() - t;
      },
    });
    const polls = async (count: number, before?: () => void) => {
      const wall: number[] = [];
      const cpu: number[] = [];
      const tracked: number[] = [];
      for (let i = 0; i < count; i++) {
        before?.();
        clock += INTERVAL_MS;
        const c = process.cpuUsage();
        const t = performance.now();
        await poller.pollOnce();
        wall.push(performance.now() - t);
        const used = process.cpuUsage(c);
        cpu.push((used.user + used.system) / 1000);
        tracked.push(trackerMs);
      }
      return { polls: count, wallMs: distribution(wall), cpuMs: distribution(cpu), trackerMs: distribution(tracked) };
    };
    const first = await polls(1);
    const details = await polls(Math.ceil(n / 64) - 1);
    const steady = await polls(STEADY);
    let next = n + leaks.length;
    // A pod replaced as the runtime and the cache watcher see it: its DEL removed its cache entry and reservation, the new one's ADD wrote them.
    const gone = db.prepare('UPDATE cache_entries SET removed_at_ms = ? WHERE container_id = ?');
    const freed = db.prepare('UPDATE ip_history SET to_ms = ? WHERE container_id = ?');
    const churn = await polls(STEADY, () => {
      const fresh: Pod[] = [];
      for (let k = 0; k < n / 100; k++) {
        const at = (next * 7919) % n;
        gone.run(clock, node.pods[at]!.id);
        freed.run(clock, node.pods[at]!.id);
        node.pods[at] = podOf(next++, 'c');
        fresh.push(node.pods[at]!);
      }
      storeAttachments(db, fresh, clock);
      client.encodeList();
    });
    const confirmedLeaks = tracker.view().leaks.confirmed;
    const liveIds = new Set(node.pods.map((p) => p.id));
    const liveCalledLeaked = tracker.gcPlan().items.filter((i) => liveIds.has(i.containerId)).length;
    db.close();
    return { sandboxes: n, leaked: leaks.length, confirmedLeaks, liveCalledLeaked, first, details, steady, churn, steadyCoreShare: round(steady.cpuMs.p50 / INTERVAL_MS, 4) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function markdown(results: readonly SizeResult[], meta: Record<string, string | number>): string {
  const row = (r: SizeResult, name: string, p: Phase) =>
    `| ${r.sandboxes.toLocaleString('en')} | ${name} | ${p.polls} | ${p.wallMs.p50} | ${p.wallMs.max} | ${p.cpuMs.p50} | ${p.trackerMs.p50} | ${p.trackerMs.max} |`;
  return [
    '# The runtime\'s side: the cost of a poll',
    '',
    `\`${meta.command}\`, ${meta.date}, ${meta.cpus}, Node.js ${meta.node}, load average ${meta.load} at the start.`,
    '',
    'A node of N pod sandboxes, each with its libcni cache entry and host-local reservation, and N/100 leaked attachments; the daemon\'s poller and tracker over the runtime\'s answers as CRI protobuf bytes (the gRPC transport and the runtime\'s own work left out). Every poll runs on the event loop: its CPU time is how long it holds it. Milliseconds.',
    '',
    '| sandboxes | polls | n | wall p50 | wall max | CPU p50 | tracker p50 | tracker max |',
    '|---|---|---|---|---|---|---|---|',
    ...results.flatMap((r) => [row(r, 'first (all new)', r.first), row(r, 'details (64 asked a poll)', r.details), row(r, 'steady', r.steady), row(r, 'churn (1 % new a poll)', r.churn)]),
    '',
    ...results.map(
      (r) =>
        `- ${r.sandboxes.toLocaleString('en')} sandboxes: ${r.confirmedLeaks} of the ${r.leaked} leaked attachments confirmed by the end, ${r.liveCalledLeaked} live sandboxes called leaked; at the default 5 s interval the steady polls take ${round(r.steadyCoreShare * 100, 2)} % of one core.`,
    ),
    '',
  ].join('\n');
}

const meta = {
  command: `node dist/bench/runtime-side.js --sandboxes ${opts.sandboxes} --steady ${STEADY}`,
  date: new Date().toISOString(),
  cpus: `${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim() ?? 'unknown'})`,
  node: process.version,
  load: round(os.loadavg()[0] ?? 0, 1),
};
const results: SizeResult[] = [];
for (const n of SIZES) {
  const r = await measure(n);
  results.push(r);
  console.log(`${n} sandboxes: steady CPU p50 ${r.steady.cpuMs.p50} ms (tracker ${r.steady.trackerMs.p50} ms), churn ${r.churn.cpuMs.p50} ms, first ${r.first.cpuMs.p50} ms; ${r.confirmedLeaks}/${r.leaked} leaks confirmed`);
}
writeFileSync(path.join(RESULTS, 'runtime-side.json'), `${JSON.stringify({ ...meta, results }, null, 2)}\n`);
writeFileSync(path.join(RESULTS, 'runtime-side.md'), markdown(results, meta));

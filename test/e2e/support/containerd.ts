/**
 * A real containerd (Debian's 1.6, its CRI plugin, runc) for the runtime's
 * e2e tests, on a private socket, root and state dir, with a CNI conf dir of
 * the test's own, and a kubelet's write calls over the CRI (RunPodSandbox,
 * StopPodSandbox, RemovePodSandbox): they live here, in test support, and
 * never in cnirec, whose client only reads.
 *
 * There is no registry on these machines: the pause image is an OCI archive
 * built here, one layer holding busybox-static's /bin/busybox, its
 * entrypoint `busybox sleep`, imported with `ctr -n k8s.io images import`.
 * runc may not lower oom_score_adj here, so the CRI plugin is told not to
 * ask (`restrict_oom_score_adj`).
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import protobuf from 'protobufjs';
import { Client, credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { CRI_PROTO, DECODE_OPTIONS } from '../../../collector/index.js';
import { run, SYSTEM_PATH } from './proc.js';

export const PAUSE_IMAGE = 'cnirec.test/pause:1';
const BUSYBOX = '/bin/busybox';

/** The kubelet's side of the CRI that cnirec never sends: the messages RunPodSandbox and its kin take (kubernetes/cri-api runtime.v1). */
const WRITE_PROTO = `
message DNSConfig { repeated string servers = 1; repeated string searches = 2; repeated string options = 3; }
message NamespaceOption { int32 network = 1; int32 pid = 2; int32 ipc = 3; string target_id = 4; }
message LinuxSandboxSecurityContext { NamespaceOption namespace_options = 1; }
message LinuxPodSandboxConfig { string cgroup_parent = 1; LinuxSandboxSecurityContext security_context = 2; }
message PodSandboxConfig {
  PodSandboxMetadata metadata = 1;
  string hostname = 2;
  string log_directory = 3;
  DNSConfig dns_config = 4;
  map<string, string> labels = 6;
  map<string, string> annotations = 7;
  LinuxPodSandboxConfig linux = 8;
}
message RunPodSandboxRequest { PodSandboxConfig config = 1; string runtime_handler = 2; }
message RunPodSandboxResponse { string pod_sandbox_id = 1; }
message StopPodSandboxRequest { string pod_sandbox_id = 1; }
message StopPodSandboxResponse {}
message RemovePodSandboxRequest { string pod_sandbox_id = 1; }
message RemovePodSandboxResponse {}
`;

const root = protobuf.parse(CRI_PROTO + WRITE_PROTO, { keepCase: true }).root;
const type = (name: string) => root.lookupType(`runtime.v1.${name}`);

export interface PodSpec {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
}

export interface Containerd {
  readonly dir: string;
  readonly socket: string;
  readonly confDir: string;
  /** containerd's own log so far (for failure messages). */
  logs(): string;
  runPodSandbox(pod: PodSpec, timeoutMs?: number): Promise<string>;
  stopPodSandbox(id: string): Promise<void>;
  removePodSandbox(id: string): Promise<void>;
  /** The ids of every sandbox it lists (ListPodSandbox, any state), as the kubelet would see them. */
  sandboxIds(): Promise<string[]>;
  /** `ctr` against this containerd, in the CRI's namespace. */
  ctr(args: readonly string[]): Promise<string>;
  /** Forgets a sandbox behind the runtime's back, as real leaks happen: its task killed, its container removed, containerd restarted. */
  leak(id: string): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and removes what it made (sandboxes left, mounts, the dirs). */
  destroy(): Promise<void>;
}

/** Why containerd cannot run here; null when it can. */
export function containerdProblem(): string | null {
  for (const bin of ['/usr/bin/containerd', '/usr/bin/ctr', '/usr/sbin/runc', BUSYBOX]) {
    if (!existsSync(bin)) return `${bin} is missing: scripts/test.sh installs containerd, runc and busybox-static`;
  }
  return null;
}

function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** The pause image as an OCI archive (one layer: /bin/busybox), its index naming it PAUSE_IMAGE. */
async function buildPauseImage(dir: string): Promise<string> {
  const layerDir = path.join(dir, 'layer');
  mkdirSync(path.join(layerDir, 'bin'), { recursive: true });
  copyFileSync(BUSYBOX, path.join(layerDir, 'bin/busybox'));
  const img = path.join(dir, 'img');
  const blobs = path.join(img, 'blobs/sha256');
  mkdirSync(blobs, { recursive: true });
  const layer = path.join(dir, 'layer.tar');
  const tar = await run('tar', ['-C', layerDir, '-cf', layer, 'bin']);
  if (tar.code !== 0) throw new Error(`tar: ${tar.stderr}`);
  const blob = (file: string) => {
    const digest = sha256(file);
    copyFileSync(file, path.join(blobs, digest));
    return { digest: `sha256:${digest}`, size: statSync(file).size };
  };
  const l = blob(layer);
  const write = (name: string, value: unknown) => {
    const file = path.join(dir, name);
    writeFileSync(file, JSON.stringify(value));
    return blob(file);
  };
  const config = write('config.json', {
    architecture: 'amd64',
    os: 'linux',
    config: { Entrypoint: ['/bin/busybox', 'sleep', '2147483647'] },
    rootfs: { type: 'layers', diff_ids: [l.digest] },
  });
  const manifest = write('manifest.json', {
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...config },
    layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', ...l }],
  });
  writeFileSync(path.join(img, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  writeFileSync(
    path.join(img, 'index.json'),
    JSON.stringify({ schemaVersion: 2, manifests: [{ mediaType: 'application/vnd.oci.image.manifest.v1+json', ...manifest, annotations: { 'io.containerd.image.name': PAUSE_IMAGE } }] }),
  );
  const archive = path.join(dir, 'pause.tar');
  const t = await run('tar', ['-C', img, '-cf', archive, '.']);
  if (t.code !== 0) throw new Error(`tar: ${t.stderr}`);
  return archive;
}

export async function startContainerd(): Promise<Containerd> {
  // Short: a unix socket path has at most 107 bytes.
  const dir = mkdtempSync('/tmp/cnirec-ctrd-');
  const socket = path.join(dir, 'c.sock');
  const confDir = path.join(dir, 'net.d');
  mkdirSync(confDir);
  const configFile = path.join(dir, 'config.toml');
  writeFileSync(
    configFile,
    `version = 2
root = "${dir}/root"
state = "${dir}/state"
[grpc]
  address = "${socket}"
[ttrpc]
  address = "${socket}.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${PAUSE_IMAGE}"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${confDir}"
`,
  );
  let child: ChildProcess | null = null;
  let output = '';
  let exited: Promise<void> = Promise.resolve();
  let client: Client | null = null;

  const call = <T>(method: string, req: string, res: string, value: object, timeoutMs = 30_000): Promise<T> => {
    client ??= new Client(`unix://${socket}`, credentials.createInsecure(), { 'grpc.max_reconnect_backoff_ms': 500 });
    const q = type(req);
    const r = type(res);
    return new Promise<T>((resolve, reject) =>
      client!.makeUnaryRequest(
        `/runtime.v1.RuntimeService/${method}`,
        (v: object) => Buffer.from(q.encode(q.fromObject(v)).finish()),
        (b: Buffer) => r.toObject(r.decode(b), DECODE_OPTIONS) as T,
        value,
        new Metadata(),
        { deadline: Date.now() + timeoutMs },
        (err: ServiceError | null, v?: T) => (err ? reject(new Error(`CRI ${method}: ${err.details || err.message}\n${output.slice(-2000)}`)) : resolve(v as T)),
      ),
    );
  };

  const start = async () => {
    output = '';
    child = spawn('/usr/bin/containerd', ['--config', configFile], { env: { PATH: SYSTEM_PATH }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (b: Buffer) => (output += b.toString('utf8')));
    child.stderr!.on('data', (b: Buffer) => (output += b.toString('utf8')));
    exited = new Promise((resolve) => child!.once('exit', () => resolve()));
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`containerd exited (${child.exitCode}):\n${output.slice(-3000)}`);
      const ok = existsSync(socket) && (await call('Version', 'VersionRequest', 'VersionResponse', { version: 'v1' }, 2000).then(() => true, () => false));
      if (ok) return;
      if (Date.now() > deadline) throw new Error(`containerd did not answer the CRI within 30 s:\n${output.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };

  const stop = async () => {
    client?.close();
    client = null;
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child?.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    }
    child = null;
  };

  const ctr = async (args: readonly string[]) => {
    const r = await run('/usr/bin/ctr', ['--address', socket, '-n', 'k8s.io', ...args]);
    if (r.code !== 0) throw new Error(`ctr ${args.join(' ')}: ${r.stderr.trim()}`);
    return r.stdout;
  };

  const sandboxIds = async (): Promise<string[]> =>
    ((await call<{ items: { id: string }[] }>('ListPodSandbox', 'ListPodSandboxRequest', 'ListPodSandboxResponse', {})).items ?? []).map((s) => s.id);

  await start();
  const archive = await buildPauseImage(dir);
  await ctr(['images', 'import', archive]);

  const self: Containerd = {
    dir,
    socket,
    confDir,
    logs: () => output,
    async runPodSandbox(pod, timeoutMs = 60_000) {
      const logDir = path.join(dir, 'logs', pod.uid);
      mkdirSync(logDir, { recursive: true });
      const r = await call<{ pod_sandbox_id: string }>(
        'RunPodSandbox',
        'RunPodSandboxRequest',
        'RunPodSandboxResponse',
        {
          config: {
            metadata: { name: pod.name, namespace: pod.namespace, uid: pod.uid, attempt: 0 },
            hostname: pod.name,
            log_directory: logDir,
            labels: { 'io.kubernetes.pod.name': pod.name, 'io.kubernetes.pod.namespace': pod.namespace, 'io.kubernetes.pod.uid': pod.uid, ...pod.labels },
            annotations: pod.annotations ?? {},
            linux: {},
          },
        },
        timeoutMs,
      );
      return r.pod_sandbox_id;
    },
    stopPodSandbox: async (id) => void (await call('StopPodSandbox', 'StopPodSandboxRequest', 'StopPodSandboxResponse', { pod_sandbox_id: id })),
    removePodSandbox: async (id) => void (await call('RemovePodSandbox', 'RemovePodSandboxRequest', 'RemovePodSandboxResponse', { pod_sandbox_id: id })),
    sandboxIds,
    ctr,
    async leak(id) {
      await ctr(['tasks', 'kill', '-s', 'SIGKILL', id]).catch(() => '');
      for (let i = 0; i < 50; i++) {
        if (await ctr(['tasks', 'delete', id]).then(() => true, () => false)) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      await ctr(['containers', 'rm', id]);
      await stop();
      await start();
    },
    stop,
    start,
    async destroy() {
      if (child) {
        for (const id of await sandboxIds().catch(() => [])) {
          await self.stopPodSandbox(id).catch(() => undefined);
          await self.removePodSandbox(id).catch(() => undefined);
        }
      }
      await stop();
      // Whatever is still mounted under its root (a snapshot of a sandbox it lost track of) goes before the dir.
      const mounts = readFileSync('/proc/self/mounts', 'utf8')
        .split('\n')
        .map((l) => l.split(' ')[1] ?? '')
        .filter((m) => m.startsWith(`${dir}/`))
        .sort((a, b) => b.length - a.length);
      for (const m of mounts) await run('umount', ['-l', m]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return self;
}

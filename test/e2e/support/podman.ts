// Podman 4.3 on the CNI backend, offline and isolated from the machine's podman state.
//
// What this machine needed (found by trying, podman 4.3.1 / runc / cgroup v1 hybrid, no systemd):
//  - default_ulimits: without them runc fails with "error setting rlimit type 7: operation not
//    permitted" (podman asks for a bigger RLIMIT_NOFILE than the hard limit 32768 and we lack
//    CAP_SYS_RESOURCE). nofile=20000 / nproc=8192 fit under the host limits.
//  - runtime = "runc": crun is not installed here and podman silently falls back to runc (crun is
//    also said to refuse this hybrid cgroup layout; not verifiable here). Set explicitly so the
//    tests do not change behaviour if crun ever gets installed.
//  - cgroup_manager = "cgroupfs" and events_logger = "file": PID 1 is not systemd, so podman
//    would pick these by itself; set explicitly so no --cgroup-manager/--events-backend flags are
//    needed and nothing depends on auto-detection.
//  - tmp_dir + lock_type = "file": the defaults are /run/libpod and the machine-global SHM lock
//    segment /dev/shm/libpod_lock. A fresh store runs a "refresh" that frees ALL locks in that
//    segment, which would disturb any other podman user on the machine. With lock_type "file"
//    the locks live in <tmp_dir>/locks.
//  - The bolt DB remembers tmp_dir/static_dir/volume_path from its first use and overrides the
//    config afterwards, so a store must be created with the final containers.conf in place.
//  - Storage: CONTAINERS_STORAGE_CONF with graphroot/runroot in the temp dir; overlay works as
//    root on this ext4 /tmp (vfs works too, just copies the 2 MB layer).
//  - --network takes the "name" field of the conflist, not the file name. Without --network podman
//    would use an in-memory "podman" network (10.88.0.0/16); default_network points at the test
//    network instead.
//  - podman's own default network ("podman", bridge cni-podman0, 10.88.0.0/16, host-local state in
//    /var/lib/cni/networks/podman) comes from <network_config_dir>/87-podman-bridge.conflist, which
//    Debian's podman package installs into /etc/cni/net.d; without that file podman 4.3 builds the
//    same network in memory and never writes it to disk (tried with an empty network_config_dir).
//    So a fresh machine needs no setup for it. defaultNetwork: 'podman' leaves network_config_dir and
//    default_network to podman, and runContainer({ network: null }) then uses that network.
//  - libcni's result cache is hard-wired to /var/lib/cni/results (not configurable in 4.3); entries
//    are removed again on teardown. IPAM state goes to our own host-local dataDir.
//  - podman invokes every plugin with VERSION first (CNI_CONTAINERID="", CNI_NETNS=dummy,
//    CNI_IFNAME=dummy, CNI_PATH=dummy), then ADD/DEL with CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAME=<name>",
//    passes its whole environment through and puts the netns at /run/netns/netns-<uuid>.
//  - Pods work offline: podman builds localhost/podman-pause:<version> itself from
//    /usr/libexec/podman/catatonit (package catatonit) on the first `pod create`.
//  - The image is imported from a tarball (busybox-static + symlinks), so no registry is needed;
//    run with --pull=never so a typo can never reach the network.
import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync, copyFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allocTestSubnet, makeIpamDataDir, removeLink, uniqueBridgeName, uniqueSuffix } from './netns.js';
import { run, runOk, SYSTEM_PATH, type RunResult } from './proc.js';

export const E2E_IMAGE = 'localhost/cnirec-busybox:e2e';
export const BUSYBOX_HOST_PATH = '/bin/busybox';
export const BUSYBOX_APPLETS = ['sh', 'sleep', 'true', 'false', 'ip', 'tc', 'cat', 'ls', 'echo', 'hostname'] as const;

export interface PodmanResult {
  stdout: string;
  stderr: string;
  code: number | null;
  durationMs: number;
}

export interface PodmanTestNetwork {
  /** Value for --network (the conflist "name"). */
  name: string;
  bridge: string;
  subnet: string;
  gateway: string;
  dataDir: string;
  conflistPath: string;
}

export interface PodmanEnvOptions {
  /** Prefix for the test network name; default "cnirec-e2e". */
  networkPrefix?: string;
  /** Storage driver; default overlay. */
  storageDriver?: 'overlay' | 'vfs';
  /** Import the busybox image right away (default true). */
  importImage?: boolean;
  /** Keep the temp dir on cleanup (debugging). */
  keepDir?: boolean;
  /**
   * cni_plugin_dirs; default ["/usr/lib/cni"]. libcni looks a plugin up as <dir>/<type>, so to use
   * test/e2e/fixtures/plugins put that dir first and use e.g. "type": "tc-shaper.sh".
   */
  cniPluginDirs?: readonly string[];
  /** Plugins chained after bridge in the test network's conflist (e.g. [{ type: 'tc-shaper.sh' }]). */
  extraPlugins?: readonly Record<string, unknown>[];
  /**
   * 'test' (default): podman's default network is the test network, in a config dir of our own.
   * 'podman': podman's built-in default network and the machine's /etc/cni/net.d, as a node runs it;
   * the test network is then unknown to podman (its bridge, IPAM state and iptables rules are the
   * machine's, shared with anyone else using podman's default network: hold the e2e lock).
   */
  defaultNetwork?: 'test' | 'podman';
}

export interface RunContainerOptions {
  cmd: readonly string[];
  /** Defaults to the test network. 'none' = no CNI calls; null = no --network flag (needed with --pod). */
  network?: string | null;
  name?: string;
  image?: string;
  /** Extra podman run flags, placed before the image. */
  extraArgs?: readonly string[];
}

export interface RunOnceResult extends PodmanResult {
  id: string;
}

export interface PodmanEnv {
  dir: string;
  confPath: string;
  storageConfPath: string;
  networkConfigDir: string;
  network: PodmanTestNetwork;
  /** Environment for every podman invocation (CONTAINERS_CONF, CONTAINERS_STORAGE_CONF, PATH, ...). */
  env: NodeJS.ProcessEnv;
  /** Runs `podman <args>` with the isolated configuration. Never rejects on non-zero exit. */
  podman(args: readonly string[], opts?: { timeoutMs?: number; input?: string }): Promise<PodmanResult>;
  /** Like podman() but throws on a non-zero exit. */
  podmanOk(args: readonly string[], opts?: { timeoutMs?: number; input?: string }): Promise<PodmanResult>;
  /** Builds the busybox tarball and imports it (idempotent); returns the image id. */
  ensureImage(): Promise<string>;
  /** `podman run -d` → container id. The container keeps running (or exits) on its own. */
  runContainer(opts: RunContainerOptions): Promise<string>;
  /** `podman run --rm` in the foreground; returns the id (via --cidfile), exit code and output. */
  runOnce(opts: RunContainerOptions): Promise<RunOnceResult>;
  /** `podman wait` → exit code of the container. */
  waitContainer(id: string): Promise<number>;
  /**
   * Creates and starts a pod on the network. The infra container (image localhost/podman-pause,
   * built locally by podman from catatonit) owns the netns, so CNI_CONTAINERID is infraId.
   */
  createPod(opts?: { name?: string; network?: string }): Promise<{ podId: string; infraId: string }>;
  /** Stops and removes a pod with all its containers; ignores "no such pod". */
  removePod(id: string): Promise<void>;
  /** Stops (no grace period) and removes a container; ignores "no such container". */
  removeContainer(id: string): Promise<void>;
  /** Removes all containers/pods/images, the bridge, IPAM state and the temp dir; safe to call twice. */
  cleanup(): Promise<void>;
}

function toml(s: string): string {
  return JSON.stringify(s); // TOML basic strings accept JSON string escapes for plain paths
}

function writeImageTarball(dir: string): string {
  const rootfs = join(dir, 'rootfs');
  for (const d of ['bin', 'etc', 'proc', 'sys', 'dev', 'tmp', 'run']) mkdirSync(join(rootfs, d), { recursive: true });
  copyFileSync(BUSYBOX_HOST_PATH, join(rootfs, 'bin', 'busybox'));
  for (const applet of BUSYBOX_APPLETS) symlinkSync('busybox', join(rootfs, 'bin', applet));
  writeFileSync(join(rootfs, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/sh\n');
  writeFileSync(join(rootfs, 'etc', 'group'), 'root:x:0:\n');
  return rootfs;
}

export async function createPodmanEnv(opts: PodmanEnvOptions = {}): Promise<PodmanEnv> {
  if (!existsSync(BUSYBOX_HOST_PATH)) throw new Error(`${BUSYBOX_HOST_PATH} missing: install busybox-static`);
  const dir = mkdtempSync(join(tmpdir(), 'cnirec-e2e-podman-'));
  const paths = {
    graphroot: join(dir, 'storage'),
    runroot: join(dir, 'run'),
    tmp: join(dir, 'libpod-tmp'),
    net: join(dir, 'cni-net.d'),
    volumes: join(dir, 'storage', 'volumes'),
  };
  for (const p of Object.values(paths)) mkdirSync(p, { recursive: true });

  const subnet = await allocTestSubnet();
  const base = subnet.replace(/\.0\/24$/, '');
  const network: PodmanTestNetwork = {
    name: `${opts.networkPrefix ?? 'cnirec-e2e'}-${uniqueSuffix()}`,
    bridge: uniqueBridgeName('cnp'),
    subnet,
    gateway: `${base}.1`,
    dataDir: makeIpamDataDir(),
    conflistPath: '',
  };
  network.conflistPath = join(paths.net, `${network.name}.conflist`);
  const conflist = {
    cniVersion: '1.0.0',
    name: network.name,
    plugins: [
      {
        type: 'bridge',
        bridge: network.bridge,
        isGateway: true,
        ipMasq: false,
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          ranges: [[{ subnet, gateway: network.gateway }]],
          routes: [{ dst: '0.0.0.0/0' }],
          dataDir: network.dataDir,
        },
      },
      ...(opts.extraPlugins ?? []),
    ],
  };
  writeFileSync(network.conflistPath, JSON.stringify(conflist, null, 2) + '\n');

  const confPath = join(dir, 'containers.conf');
  writeFileSync(
    confPath,
    [
      '[containers]',
      'default_ulimits = ["nofile=20000:20000", "nproc=8192:8192"]',
      'log_driver = "k8s-file"',
      '',
      '[network]',
      'network_backend = "cni"',
      `cni_plugin_dirs = [${(opts.cniPluginDirs ?? ['/usr/lib/cni']).map(toml).join(', ')}]`,
      ...(opts.defaultNetwork === 'podman' ? [] : [`network_config_dir = ${toml(paths.net)}`, `default_network = ${toml(network.name)}`]),
      '',
      '[engine]',
      'runtime = "runc"',
      'cgroup_manager = "cgroupfs"',
      'events_logger = "file"',
      `tmp_dir = ${toml(paths.tmp)}`,
      'lock_type = "file"',
      `volume_path = ${toml(paths.volumes)}`,
      '',
    ].join('\n'),
  );
  const storageConfPath = join(dir, 'storage.conf');
  writeFileSync(
    storageConfPath,
    [
      '[storage]',
      `driver = ${toml(opts.storageDriver ?? 'overlay')}`,
      `graphroot = ${toml(paths.graphroot)}`,
      `runroot = ${toml(paths.runroot)}`,
      '',
    ].join('\n'),
  );

  const env: NodeJS.ProcessEnv = {
    PATH: SYSTEM_PATH,
    HOME: dir, // keeps ~/.config/containers of the caller out of the picture
    CONTAINERS_CONF: confPath,
    CONTAINERS_STORAGE_CONF: storageConfPath,
    CONTAINERS_REGISTRIES_CONF: join(dir, 'registries.conf'),
    TMPDIR: paths.tmp,
  };
  writeFileSync(join(dir, 'registries.conf'), 'unqualified-search-registries = []\n');

  const podman = async (args: readonly string[], o: { timeoutMs?: number; input?: string } = {}): Promise<PodmanResult> => {
    const r: RunResult = await run('podman', args, { env, timeoutMs: o.timeoutMs ?? 120_000, input: o.input });
    return { stdout: r.stdout, stderr: r.stderr, code: r.code, durationMs: r.durationMs };
  };
  const podmanOk = async (args: readonly string[], o: { timeoutMs?: number; input?: string } = {}): Promise<PodmanResult> => {
    const r = await podman(args, o);
    if (r.code !== 0) {
      throw new Error(`podman ${args.join(' ')} failed (code ${String(r.code)}):\n${r.stderr.trim()}\n${r.stdout.trim()}`);
    }
    return r;
  };

  let imageId: string | undefined;
  const ensureImage = async (): Promise<string> => {
    if (imageId) return imageId;
    const existing = await podman(['image', 'inspect', '--format', '{{.Id}}', E2E_IMAGE]);
    if (existing.code === 0) {
      imageId = existing.stdout.trim();
      return imageId;
    }
    const rootfs = writeImageTarball(dir);
    const tarball = join(dir, 'cnirec-busybox.tar');
    await runOk('tar', ['-C', rootfs, '--numeric-owner', '--owner=0', '--group=0', '-cf', tarball, '.']);
    const r = await podmanOk(['import', '--quiet', '--change', 'CMD=["/bin/sh"]', tarball, E2E_IMAGE]);
    imageId = r.stdout.trim().replace(/^sha256:/, '');
    return imageId;
  };

  const runArgs = (o: RunContainerOptions): string[] => [
    '--pull=never',
    ...(o.network === null ? [] : [`--network=${o.network ?? network.name}`]),
    ...(o.name ? [`--name=${o.name}`] : []),
    ...(o.extraArgs ?? []),
    o.image ?? E2E_IMAGE,
    ...o.cmd,
  ];

  const runContainer = async (o: RunContainerOptions): Promise<string> => {
    const r = await podmanOk(['run', '--detach', ...runArgs(o)]);
    return r.stdout.trim().split('\n').pop() ?? '';
  };

  const runOnce = async (o: RunContainerOptions): Promise<RunOnceResult> => {
    const cidfile = join(dir, `cid-${uniqueSuffix()}`);
    const r = await podman(['run', '--rm', `--cidfile=${cidfile}`, ...runArgs(o)]);
    let id = '';
    try {
      id = readFileSync(cidfile, 'utf8').trim();
    } catch {
      // container was never created; r.stderr says why
    }
    rmSync(cidfile, { force: true });
    return { ...r, id };
  };

  const waitContainer = async (id: string): Promise<number> => {
    const r = await podmanOk(['wait', id]);
    return Number(r.stdout.trim());
  };

  const createPod = async (o: { name?: string; network?: string } = {}): Promise<{ podId: string; infraId: string }> => {
    const created = await podmanOk([
      'pod',
      'create',
      ...(o.network === null ? [] : [`--network=${o.network ?? network.name}`]),
      ...(o.name ? [`--name=${o.name}`] : []),
    ]);
    const podId = created.stdout.trim().split('\n').pop() ?? '';
    await podmanOk(['pod', 'start', podId]);
    const infra = await podmanOk(['pod', 'inspect', '--format', '{{.InfraContainerID}}', podId]);
    return { podId, infraId: infra.stdout.trim() };
  };

  const removePod = async (id: string): Promise<void> => {
    const r = await podman(['pod', 'rm', '--force', '--time=0', id]);
    if (r.code !== 0 && !/no such pod/i.test(r.stderr)) {
      throw new Error(`podman pod rm ${id} failed: ${r.stderr.trim()}`);
    }
  };

  const removeContainer = async (id: string): Promise<void> => {
    const r = await podman(['rm', '--force', '--time=0', id]);
    if (r.code !== 0 && !/no such container/i.test(r.stderr)) {
      throw new Error(`podman rm ${id} failed: ${r.stderr.trim()}`);
    }
  };

  let cleaned = false;
  const cleanup = async (): Promise<void> => {
    if (cleaned) return;
    cleaned = true;
    const problems: string[] = [];
    const note = (r: PodmanResult, what: string): void => {
      if (r.code !== 0) problems.push(`${what}: ${r.stderr.trim()}`);
    };
    note(await podman(['pod', 'rm', '--all', '--force', '--time=0']), 'pod rm');
    note(await podman(['rm', '--all', '--force', '--time=0']), 'rm');
    note(await podman(['rmi', '--all', '--force']), 'rmi');
    // Whatever podman left mounted under our dir (should be nothing) must go before rm -rf.
    const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((l) => l.split(' ')[4] ?? '')
      .filter((m) => m.startsWith(dir + '/'))
      .sort((a, b) => b.length - a.length);
    for (const m of mounts) await run('umount', ['-l', m]);
    await removeLink(network.bridge).catch((e: unknown) => problems.push(String(e)));
    rmSync(network.dataDir, { recursive: true, force: true });
    if (!opts.keepDir) rmSync(dir, { recursive: true, force: true });
    if (problems.length > 0) throw new Error(`podman env cleanup:\n${problems.join('\n')}`);
  };

  const pm: PodmanEnv = {
    dir,
    confPath,
    storageConfPath,
    networkConfigDir: paths.net,
    network,
    env,
    podman,
    podmanOk,
    ensureImage,
    runContainer,
    runOnce,
    waitContainer,
    createPod,
    removePod,
    removeContainer,
    cleanup,
  };
  if (opts.importImage ?? true) {
    try {
      await ensureImage();
    } catch (e) {
      await cleanup().catch(() => undefined);
      throw e;
    }
  }
  return pm;
}

// Proves the e2e support works against the real plugins and the real container runtime.
// Requires root; it fails (never skips) when preconditions are missing.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CNI_BIN_DIR, execPlugin, parseStdout, podCniArgs } from './support/plugin-driver.js';
import { configBytes, createTestBridgeNetwork, withNetns, withPrevResult, type Netns, type TestBridgeNetwork } from './support/netns.js';
import { createPodmanEnv, E2E_IMAGE, type PodmanEnv } from './support/podman.js';
import { run } from './support/proc.js';

const here = dirname(fileURLToPath(import.meta.url));
const PLUGINS = join(here, 'fixtures', 'plugins');
const TC_SHAPER = join(PLUGINS, 'tc-shaper.sh');
const SLEEPER = join(PLUGINS, 'sleeper.sh');
const BRIDGE = join(CNI_BIN_DIR, 'bridge');

interface CniResult {
  cniVersion: string;
  interfaces?: { name: string; sandbox?: string }[];
  ips?: { address: string; gateway?: string; interface?: number }[];
}

beforeAll(async () => {
  if (process.getuid?.() !== 0) {
    throw new Error(`e2e support selftest must run as root (uid is ${String(process.getuid?.())}): it creates netns, bridges and containers`);
  }
  const missing: string[] = [];
  for (const f of [BRIDGE, join(CNI_BIN_DIR, 'host-local'), '/bin/busybox', TC_SHAPER, SLEEPER]) {
    if (!existsSync(f)) missing.push(f);
  }
  for (const tool of ['ip', 'tc', 'jq', 'nsenter', 'podman', 'runc', 'tar']) {
    const r = await run('sh', ['-c', `command -v ${tool}`]);
    if (r.code !== 0) missing.push(tool);
  }
  if (missing.length > 0) throw new Error(`e2e preconditions missing: ${missing.join(', ')}`);
});

describe('plugin driver + netns: bridge/host-local', () => {
  let ns: Netns;
  let net: TestBridgeNetwork;
  beforeAll(async () => {
    ns = await withNetns('cnirec-st');
    net = await createTestBridgeNetwork('cnirec-st');
  });
  afterAll(async () => {
    await ns?.remove();
    await net?.cleanup();
  });

  it('VERSION lists 1.0.0', async () => {
    const r = await execPlugin({ plugin: BRIDGE, command: 'VERSION', containerId: '', netns: '', ifname: '', stdin: '{"cniVersion":"1.0.0"}' });
    expect(r.exitCode).toBe(0);
    expect(parseStdout<{ supportedVersions: string[] }>(r).supportedVersions).toContain('1.0.0');
  });

  it('ADD, CHECK, DEL (twice) in a fresh netns', async () => {
    const containerId = `st-${Date.now()}`;
    const cniArgs = podCniArgs('e2e', 'selftest', '11111111-2222-3333-4444-555555555555', containerId);
    expect(cniArgs).toBe(
      `IgnoreUnknown=1;K8S_POD_NAMESPACE=e2e;K8S_POD_NAME=selftest;K8S_POD_UID=11111111-2222-3333-4444-555555555555;K8S_POD_INFRA_CONTAINER_ID=${containerId}`,
    );
    const base = { plugin: BRIDGE, containerId, netns: ns.path, ifname: 'eth0', cniArgs };
    const stdin = configBytes(net.config);

    const add = await execPlugin({ ...base, command: 'ADD', stdin });
    expect(add.exitCode, add.stderr.toString()).toBe(0);
    expect(add.signal).toBeNull();
    expect(add.pid).toBeGreaterThan(0);
    expect(add.stdinBytes.equals(stdin)).toBe(true);
    expect(add.env).toMatchObject({ CNI_COMMAND: 'ADD', CNI_NETNS: ns.path, CNI_ARGS: cniArgs, CNI_PATH: CNI_BIN_DIR });
    const result = parseStdout<CniResult>(add);
    expect(result.cniVersion).toBe('1.0.0');
    const prefix = net.subnet.replace(/0\/24$/, '');
    expect(result.ips?.[0]?.address.startsWith(prefix), JSON.stringify(result)).toBe(true);
    const inNs = await run('ip', ['-n', ns.name, '-4', '-o', 'addr', 'show', 'dev', 'eth0']);
    expect(inNs.stdout).toContain(result.ips?.[0]?.address);

    const check = await execPlugin({ ...base, command: 'CHECK', stdin: configBytes(withPrevResult(net.config, add.stdout)) });
    expect(check.exitCode, check.stdout.toString() + check.stderr.toString()).toBe(0);

    const del = await execPlugin({ ...base, command: 'DEL', stdin: configBytes(withPrevResult(net.config, add.stdout)) });
    expect(del.exitCode, del.stdout.toString() + del.stderr.toString()).toBe(0);
    expect((await run('ip', ['-n', ns.name, 'link', 'show', 'eth0'])).code).not.toBe(0);
    const again = await execPlugin({ ...base, command: 'DEL', stdin });
    expect(again.exitCode).toBe(0);
  });

  it('passes argv = [plugin] and only the CNI env (checked via /proc while the plugin runs)', async () => {
    let cmdline = '';
    let environ: string[] = [];
    const r = await execPlugin({
      plugin: SLEEPER,
      command: 'ADD',
      containerId: 'argv-check',
      netns: ns.path,
      ifname: 'eth0',
      stdin: '{}',
      extraEnv: { SLEEPER_SECONDS: '0.3' },
      onSpawn: (child) => {
        // At spawn time the kernel may not have exec'd yet: poll briefly.
        const deadline = Date.now() + 2000;
        while (Date.now() < deadline) {
          cmdline = readFileSync(`/proc/${String(child.pid)}/cmdline`, 'utf8');
          if (cmdline.includes('sleeper.sh')) break;
        }
        environ = readFileSync(`/proc/${String(child.pid)}/environ`, 'utf8').split('\0').filter(Boolean);
      },
    });
    expect(r.exitCode).toBe(0);
    // A #! script: the kernel puts the interpreter in front, the script path follows, nothing else.
    expect(cmdline.split('\0').filter(Boolean)).toEqual(['/bin/bash', SLEEPER]);
    expect(environ.map((e) => e.split('=')[0]).sort()).toEqual(
      ['CNI_ARGS', 'CNI_COMMAND', 'CNI_CONTAINERID', 'CNI_IFNAME', 'CNI_NETNS', 'CNI_PATH', 'PATH', 'SLEEPER_SECONDS'].sort(),
    );
  });
});

describe('fixture plugins', () => {
  it('tc-shaper ADD/CHECK/DEL shapes lo inside the netns', async () => {
    await withNetns('cnirec-tc', async (ns) => {
      const conf = { cniVersion: '1.0.0', name: 'tc-test', type: 'tc-shaper' };
      const base = { plugin: TC_SHAPER, containerId: 'tc-1', netns: ns.path, ifname: 'eth0', stdin: JSON.stringify(conf) };
      const add = await execPlugin({ ...base, command: 'ADD' });
      expect(add.exitCode, add.stderr.toString()).toBe(0);
      expect(parseStdout<CniResult>(add)).toMatchObject({ cniVersion: '1.0.0', interfaces: [{ name: 'lo', sandbox: ns.path }] });
      expect((await run('tc', ['-n', ns.name, 'qdisc', 'show', 'dev', 'lo'])).stdout).toMatch(/qdisc tbf /);
      expect((await execPlugin({ ...base, command: 'CHECK' })).exitCode).toBe(0);

      const del = await execPlugin({ ...base, command: 'DEL' });
      expect(del.exitCode).toBe(0);
      expect(del.stdout.length).toBe(0);
      expect((await run('tc', ['-n', ns.name, 'qdisc', 'show', 'dev', 'lo'])).stdout).not.toMatch(/tbf/);
    });
  });

  it('tc-shaper errors are CNI error JSON with a non-zero exit', async () => {
    const r = await execPlugin({
      plugin: TC_SHAPER,
      command: 'ADD',
      containerId: 'tc-err',
      netns: '/var/run/netns/cnirec-does-not-exist',
      ifname: 'eth0',
      stdin: '{"cniVersion":"1.0.0","name":"x","type":"tc-shaper"}',
    });
    expect(r.exitCode).toBe(1);
    expect(parseStdout(r)).toMatchObject({ code: 4, msg: expect.stringContaining('does not exist') });

    const v = await execPlugin({ plugin: TC_SHAPER, command: 'VERSION', containerId: '', netns: '', ifname: '', stdin: '{"cniVersion":"1.0.0"}' });
    expect(parseStdout(v)).toMatchObject({ supportedVersions: expect.arrayContaining(['1.0.0']) });
  });

  it('sleeper killed by SIGKILL reports the signal', async () => {
    const started = Date.now();
    const r = await execPlugin({
      plugin: SLEEPER,
      command: 'ADD',
      containerId: 'sleepy',
      netns: '/var/run/netns/none',
      ifname: 'eth0',
      stdin: '{"cniVersion":"1.0.0","name":"s","type":"sleeper"}',
      killAfterMs: 300,
    });
    expect(r.signal).toBe('SIGKILL');
    expect(r.exitCode).toBeNull();
    expect(r.stderr.toString()).toContain('sleeper: ADD for sleepy');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('a missing plugin rejects', async () => {
    await expect(
      execPlugin({ plugin: '/nonexistent/plugin', command: 'ADD', containerId: 'x', netns: '', ifname: 'eth0', stdin: '' }),
    ).rejects.toThrow(/ENOENT/);
  });
});

describe('podman on the CNI backend', () => {
  let pm: PodmanEnv;
  beforeAll(async () => {
    const t = Date.now();
    pm = await createPodmanEnv({ networkPrefix: 'cnirec-st' });
    console.log(`podman env + image import: ${Date.now() - t} ms (${pm.dir})`);
  });
  afterAll(async () => {
    await pm?.cleanup();
  });

  it('uses the isolated configuration', async () => {
    const info = await pm.podmanOk(['info', '--format', '{{.Host.NetworkBackend}} {{.Store.GraphRoot}} {{.Host.OCIRuntime.Name}}']);
    expect(info.stdout.trim().split(' ')).toEqual(['cni', expect.stringContaining(pm.dir), 'runc']);
    const nets = await pm.podmanOk(['network', 'ls', '--format', '{{.Name}}']);
    expect(nets.stdout.split('\n')).toContain(pm.network.name);
    const img = await pm.podmanOk(['images', '--format', '{{.Repository}}:{{.Tag}}']);
    expect(img.stdout.trim()).toBe(E2E_IMAGE);
  });

  it('podman run --rm on the test network exits 0 and gets an address from the test subnet', async () => {
    const r = await pm.runOnce({ name: 'cnirec-st-once', cmd: ['sh', '-c', 'ip -4 -o addr show dev eth0'] });
    console.log(`podman run --rm: ${Math.round(r.durationMs)} ms`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.id).toMatch(/^[0-9a-f]{64}$/);
    expect(r.stdout).toContain(`inet ${pm.network.subnet.replace(/0\/24$/, '')}`);
    const t = await pm.runOnce({ cmd: ['true'] });
    expect(t.code, t.stderr).toBe(0);
  });

  it('create/start (detached), stop, remove', async () => {
    const t0 = Date.now();
    const id = await pm.runContainer({ name: 'cnirec-st-detached', cmd: ['sleep', '300'] });
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    const st = await pm.podmanOk(['inspect', '--format', '{{.State.Status}} {{.NetworkSettings.SandboxKey}}', id]);
    expect(st.stdout).toMatch(/^running \/run\/netns\/\S+/);
    await pm.podmanOk(['stop', '--time=0', id]);
    await pm.removeContainer(id);
    await pm.removeContainer(id); // idempotent
    console.log(`podman run -d + stop + rm: ${Date.now() - t0} ms`);
    expect((await pm.podman(['container', 'exists', id])).code).toBe(1);
    const exited = await pm.runContainer({ cmd: ['sh', '-c', 'exit 3'] });
    expect(await pm.waitContainer(exited)).toBe(3);
    await pm.removeContainer(exited);
  });

  it('pods: infra container owns the netns on the test network', async () => {
    const t0 = Date.now();
    const { podId, infraId } = await pm.createPod({ name: 'cnirec-st-pod' });
    console.log(`podman pod create + start: ${Date.now() - t0} ms`);
    expect(infraId).toMatch(/^[0-9a-f]{64}$/);
    const r = await pm.runOnce({ network: null, extraArgs: [`--pod=${podId}`], cmd: ['sh', '-c', 'ip -4 -o addr show dev eth0'] });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`inet ${pm.network.subnet.replace(/0\/24$/, '')}`);
    await pm.removePod(podId);
    await pm.removePod(podId);
  });
});

describe('podman with a fixture plugin chained after bridge', () => {
  let pm: PodmanEnv;
  beforeAll(async () => {
    pm = await createPodmanEnv({ networkPrefix: 'cnirec-chain', cniPluginDirs: [PLUGINS, CNI_BIN_DIR], extraPlugins: [{ type: 'tc-shaper.sh' }] });
  });
  afterAll(async () => {
    await pm?.cleanup();
  });

  it('tc-shaper.sh runs inside podman\'s CNI ADD and shapes lo in the container', async () => {
    const r = await pm.runOnce({ cmd: ['tc', 'qdisc', 'show', 'dev', 'lo'] });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/qdisc tbf /);
  });
});

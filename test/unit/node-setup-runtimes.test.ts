import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { containerdCniPaths, containerdImports } from '../../collector/node-setup/containerd-config.js';
import { crioCniPaths, crioFlags } from '../../collector/node-setup/crio-config.js';
import { kubeletView } from '../../collector/node-setup/kubelet-args.js';
import { podmanCniPaths } from '../../collector/node-setup/podman-config.js';

const DIR = join(import.meta.dirname, 'fixtures/node-setup');
const file = (rel: string, as = `/etc/${rel}`) => ({ path: as, text: readFileSync(join(DIR, rel), 'utf8') });

describe('containerd config.toml', () => {
  it('reads the CRI plugin cni table of a version 2 config, and runtime classes with their own conf dir', () => {
    const r = containerdCniPaths([file('containerd/config-v2.toml', '/etc/containerd/config.toml')]);
    expect(r.problems).toEqual([]);
    expect(r.paths).toMatchObject({
      runtime: 'containerd',
      sources: ['/etc/containerd/config.toml'],
      confDir: '/etc/cni/net.d',
      binDirs: ['/opt/cni/bin'],
      loader: 'go-cni',
      maxConfNum: 1,
      extraConfDirs: [{ handler: 'kata', confDir: '/etc/cni/kata.d', maxConfNum: 1 }],
    });
  });

  it('reads io.containerd.cri.v1.runtime of a version 3 config, bin_dirs before the deprecated bin_dir', () => {
    const r = containerdCniPaths([file('containerd/config-v3.toml')]);
    expect(r.paths).toMatchObject({ confDir: '/var/lib/rancher/k3s/agent/etc/cni/net.d', binDirs: ['/var/lib/rancher/k3s/data/cni', '/opt/cni/bin'], maxConfNum: 2, extraConfDirs: [] });
  });

  it("falls back to containerd's defaults when the config says nothing about CNI, or there is no config", () => {
    expect(containerdCniPaths([file('containerd/config-v3-defaults.toml')]).paths).toMatchObject({ confDir: '/etc/cni/net.d', binDirs: ['/opt/cni/bin'], maxConfNum: 1 });
    const none = containerdCniPaths([]);
    expect(none.paths).toMatchObject({ confDir: '/etc/cni/net.d', sources: ['containerd built-in defaults'] });
    expect(none.paths?.notes.join(' ')).toMatch(/built-in defaults/);
  });

  it('knows a config that disables the CRI plugin (Docker\'s) runs no CNI', () => {
    const r = containerdCniPaths([file('containerd/config-docker.toml')]);
    expect(r.paths?.confDir).toBeNull();
    expect(r.paths?.notes.join(' ')).toMatch(/disabled_plugins lists the CRI plugin/);
  });

  it('reads the old version 1 layout and says containerd 2 refuses it', () => {
    const r = containerdCniPaths([file('containerd/config-v1.toml')]);
    expect(r.paths).toMatchObject({ confDir: '/etc/cni/net.d', binDirs: ['/usr/libexec/cni'] });
    expect(r.paths?.notes.join(' ')).toMatch(/version 1/);
  });

  it('merges imported files over the main one, later files winning', () => {
    const main = file('containerd/config-imports.toml', '/etc/containerd/config.toml');
    expect(containerdImports(main)).toEqual(['/etc/containerd/conf.d/*.toml']);
    const r = containerdCniPaths([main, file('containerd/imported-cni.toml', '/etc/containerd/conf.d/cni.toml')]);
    expect(r.paths).toMatchObject({ confDir: '/etc/cni/multus.d', binDirs: ['/opt/cni/bin'], sources: ['/etc/containerd/config.toml', '/etc/containerd/conf.d/cni.toml'] });
  });

  it('names a TOML error with its line and column, and says what it means', () => {
    const r = containerdCniPaths([file('containerd/config-broken.toml', '/etc/containerd/config.toml')]);
    expect(r.paths).toBeNull();
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]).toMatchObject({ code: 'runtime-config-invalid', severity: 'error', path: '/etc/containerd/config.toml' });
    expect(r.problems[0]?.message).toMatch(/^\/etc\/containerd\/config\.toml is not valid TOML at line 3, column \d+ .*containerd refuses to start/);
  });
});

describe('CRI-O crio.conf and crio.conf.d', () => {
  const files = [file('crio/crio.conf', '/etc/crio/crio.conf'), file('crio/crio.conf.d/10-crio.conf', '/etc/crio/crio.conf.d/10-crio.conf'), file('crio/crio.conf.d/20-network.conf', '/etc/crio/crio.conf.d/20-network.conf')];

  it('applies the drop-ins in lexical order over crio.conf, the last setting winning', () => {
    const r = crioCniPaths(files);
    expect(r.problems).toEqual([]);
    expect(r.paths).toMatchObject({
      runtime: 'cri-o',
      confDir: '/etc/kubernetes/cni/net.d',
      binDirs: ['/usr/libexec/cni', '/opt/cni/bin'],
      defaultNetwork: 'k8s-pod-network',
      loader: 'ocicni',
      sources: ['/etc/crio/crio.conf', '/etc/crio/crio.conf.d/10-crio.conf', '/etc/crio/crio.conf.d/20-network.conf'],
    });
  });

  it('uses crio.conf alone, and the defaults with no file', () => {
    expect(crioCniPaths([files[0]!]).paths).toMatchObject({ confDir: '/etc/cni/net.d', binDirs: ['/opt/cni/bin'], defaultNetwork: null });
    expect(crioCniPaths([]).paths).toMatchObject({ confDir: '/etc/cni/net.d', binDirs: ['/opt/cni/bin'], sources: ['CRI-O built-in defaults'] });
  });

  it('lets the command line override the files', () => {
    const flags = crioFlags(['/usr/bin/crio', '--config-dir=/etc/crio/other.d', '--cni-config-dir', '/run/cni', '--cni-plugin-dir=/a', '--cni-plugin-dir', '/b']);
    expect(flags).toEqual({ configDir: '/etc/crio/other.d', confDir: '/run/cni', pluginDirs: ['/a', '/b'] });
    expect(crioCniPaths(files, flags).paths).toMatchObject({ confDir: '/run/cni', binDirs: ['/a', '/b'], defaultNetwork: 'k8s-pod-network' });
  });
});

describe("podman's containers.conf", () => {
  it('reads the CNI backend settings', () => {
    const r = podmanCniPaths([file('podman/containers.conf', '/etc/containers/containers.conf')]);
    expect(r.paths).toMatchObject({ runtime: 'podman', confDir: '/etc/cni/net.d', binDirs: ['/usr/lib/cni', '/opt/cni/bin'], defaultNetwork: 'team-net', loader: 'podman' });
  });

  it('knows netavark runs no CNI, a later file overriding an earlier one', () => {
    const r = podmanCniPaths([file('podman/containers.conf'), file('podman/netavark.conf', '/etc/containers/containers.conf.d/50-netavark.conf')]);
    expect(r.paths.confDir).toBeNull();
    expect(r.paths.notes.join(' ')).toMatch(/netavark/);
  });
});

describe('kubelet flags', () => {
  it('runs CNI itself only with --network-plugin=cni (Kubernetes 1.23 and older)', () => {
    const old = kubeletView(['/usr/bin/kubelet', '--network-plugin=cni', '--cni-conf-dir=/etc/cni/net.d', '--cni-bin-dir=/opt/cni/bin,/usr/lib/cni']);
    expect(old.paths).toMatchObject({ runtime: 'kubelet', confDir: '/etc/cni/net.d', binDirs: ['/opt/cni/bin', '/usr/lib/cni'] });
    const now = kubeletView(['/usr/bin/kubelet', '--container-runtime-endpoint=unix:///run/containerd/containerd.sock']);
    expect(now).toEqual({ paths: null, runtime: 'containerd', endpoint: 'unix:///run/containerd/containerd.sock' });
  });
});

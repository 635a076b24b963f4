/**
 * `cnirec gc` as built (bin/cnirec.js), against a fake CRI runtime on a real
 * socket and libcni/host-local files in temp dirs, with shell plugins that
 * log how they were run: the plan, a dry run that frees nothing, --apply
 * running the DEL as libcni's GC does (reverse order, cached config, netns and
 * args, prevResult), a plugin's error reported, a refusal that runs nothing.
 * The e2e suite does the same with the real containerd and plugins.
 */

import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeCri, type FakeCri } from '../support/fake-cri.js';
import { cnirec } from './cli-harness.js';

let dir: string;
let fake: FakeCri | null = null;
const results = () => path.join(dir, 'results');
const networks = () => path.join(dir, 'networks');
const bin = () => path.join(dir, 'bin');
const log = () => path.join(dir, 'plugin.log');

/** A plugin that logs its command, env and stdin, then runs `body`. */
function plugin(name: string, body: string) {
  const file = path.join(bin(), name);
  writeFileSync(
    file,
    `#!/bin/sh
stdin=$(cat)
printf '%s\\n' "{\\"plugin\\":\\"${name}\\",\\"command\\":\\"$CNI_COMMAND\\",\\"containerId\\":\\"$CNI_CONTAINERID\\",\\"netns\\":\\"$CNI_NETNS\\",\\"ifname\\":\\"$CNI_IFNAME\\",\\"args\\":\\"$CNI_ARGS\\",\\"path\\":\\"$CNI_PATH\\",\\"stdin\\":$stdin}" >> ${log()}
${body}
`,
  );
  chmodSync(file, 0o755);
}

/** A cniCacheV1 entry as libcni writes it, and host-local's reservation of its address. */
function attachment(id: string, ip: string, plugins: object[], opts: { pod?: boolean; ageMs?: number } = {}) {
  const conflist = { cniVersion: '1.0.0', name: 'testnet', plugins };
  const args = opts.pod === false ? [['IgnoreUnknown', '1']] : [['IgnoreUnknown', '1'], ['K8S_POD_NAMESPACE', 'ns'], ['K8S_POD_NAME', `pod-${id}`]];
  const file = path.join(results(), `testnet-${id}-eth0`);
  writeFileSync(
    file,
    JSON.stringify({
      kind: 'cniCacheV1',
      containerId: id,
      config: Buffer.from(JSON.stringify(conflist)).toString('base64'),
      ifName: 'eth0',
      networkName: 'testnet',
      netns: `/var/run/netns/cni-${id}`,
      cniArgs: args,
      result: { cniVersion: '1.0.0', ips: [{ address: `${ip}/24` }] },
    }),
  );
  const reservation = path.join(networks(), 'testnet', ip);
  writeFileSync(reservation, `${id}\r\neth0`);
  const old = (Date.now() - (opts.ageMs ?? 120_000)) / 1000;
  utimesSync(file, old, old);
  utimesSync(reservation, old, old);
  return { file, reservation };
}

const gc = (args: string[], socket = fake!.socket) =>
  cnirec(['gc', '--cri-endpoint', socket, '--cni-cache-dirs', results(), '--host-local-dirs', networks(), '--cni-bin-dir', bin(), ...args], { timeoutMs: 30_000 });
const calls = () => (existsSync(log()) ? readFileSync(log(), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>) : []);

beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'cnirec-gc-'));
  for (const d of [results(), path.join(networks(), 'testnet'), bin()]) mkdirSync(d, { recursive: true });
  // Frees the reservation as host-local does on DEL.
  plugin('fakebr', `[ "$CNI_COMMAND" = DEL ] && rm -f ${path.join(networks(), 'testnet')}/$(printf '%s' "$stdin" | sed -n 's/.*"address":"\\([0-9.]*\\)\\/.*/\\1/p')
exit 0`);
  plugin('fakemeta', 'exit 0');
  plugin('fakefail', `printf '{"cniVersion":"1.0.0","code":11,"msg":"cannot enter netns","details":"no such file"}'
exit 1`);
  fake = await startFakeCri('cri', { sandboxes: [{ id: 'live', namespace: 'ns', name: 'pod-live' }] });
});

afterEach(async () => {
  await fake?.close();
  fake = null;
  rmSync(dir, { recursive: true, force: true });
});

describe('cnirec gc', () => {
  it('lists what a GC would free on a dry run and frees nothing', async () => {
    const leak = attachment('gone', '10.5.0.9', [{ type: 'fakebr' }]);
    attachment('live', '10.5.0.2', [{ type: 'fakebr' }]);
    attachment('young', '10.5.0.3', [{ type: 'fakebr' }], { ageMs: 1000 });
    attachment('podman', '10.5.0.4', [{ type: 'fakebr' }], { pod: false });
    const r = await gc([]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('cnirec gc: what a CNI GC would free on this node');
    expect(r.stdout).toContain('(fakerd 1.0.0 at');
    expect(r.stdout).toMatch(/^gone\s+testnet\s+eth0\s+10\.5\.0\.9\s+ns\/pod-gone/m);
    expect(r.stdout).toContain('1 leaked attachment, 1 of them freeable: dry run, nothing was freed');
    expect(r.stdout).toContain('not judged: 1 younger than 1m (--min-age');
    expect(r.stdout).toContain('1 whose args name no pod');
    expect(r.stdout).not.toMatch(/^live /m);
    expect(existsSync(leak.file) && existsSync(leak.reservation)).toBe(true);
    expect(calls()).toEqual([]);
  });

  it('--apply runs the DEL as libcni’s GC does, removes the cache entry, and says what was freed', async () => {
    const leak = attachment('gone', '10.5.0.9', [{ type: 'fakebr', bridge: 'br0' }, { type: 'fakemeta', capabilities: { portMappings: true } }]);
    const live = attachment('live', '10.5.0.2', [{ type: 'fakebr' }]);
    const r = await gc(['--apply', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const body = JSON.parse(r.stdout) as { applied: boolean; items: { containerId: string; outcome: unknown }[] };
    expect(body.applied).toBe(true);
    expect(body.items).toEqual([expect.objectContaining({ containerId: 'gone', outcome: { result: 'freed', plugins: ['fakemeta', 'fakebr'], reservationsLeft: [] } })]);
    expect(existsSync(leak.file)).toBe(false);
    expect(existsSync(leak.reservation)).toBe(false);
    expect(existsSync(live.file) && existsSync(live.reservation)).toBe(true);
    const ran = calls();
    expect(ran.map((c) => c.plugin)).toEqual(['fakemeta', 'fakebr']);
    expect(ran[1]).toMatchObject({
      command: 'DEL',
      containerId: 'gone',
      netns: '/var/run/netns/cni-gone',
      ifname: 'eth0',
      args: 'IgnoreUnknown=1;K8S_POD_NAMESPACE=ns;K8S_POD_NAME=pod-gone',
      path: bin(),
      stdin: { type: 'fakebr', bridge: 'br0', name: 'testnet', cniVersion: '1.0.0', prevResult: { cniVersion: '1.0.0', ips: [{ address: '10.5.0.9/24' }] } },
    });
    // The runtime was asked again before the DEL.
    expect(fake!.state.calls.ListPodSandbox).toBe(2);
  });

  it('reports a DEL that fails with the plugin’s own error, keeps the cache entry, and exits 1', async () => {
    const leak = attachment('gone', '10.5.0.9', [{ type: 'fakebr' }, { type: 'fakefail' }]);
    const r = await gc(['--apply']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('failed (fakefail): cannot enter netns: no such file (CNI error 11)');
    expect(r.stdout).toContain('0 freed, 1 failed');
    expect(existsSync(leak.file)).toBe(true);
    // libcni stops at the first plugin that fails: bridge, after it in reverse, never ran.
    expect(calls().map((c) => c.plugin)).toEqual(['fakefail']);
  });

  it('leaves alone a host-local reservation that names no pod: the runtime cannot say whose it is', async () => {
    writeFileSync(path.join(networks(), 'testnet', '10.5.0.7'), 'orphan\r\neth0');
    const old = (Date.now() - 120_000) / 1000;
    utimesSync(path.join(networks(), 'testnet', '10.5.0.7'), old, old);
    // host-local's file names no pod: not the runtime's to judge without what else knows the container.
    const r = await gc(['--json']);
    expect(JSON.parse(r.stdout).items).toEqual([]);
  });

  it.each([
    ['no runtime at the socket', (d: string) => path.join(d, 'absent.sock'), /No CRI socket at .*absent\.sock/],
    ['the runtime off', () => 'none', /The runtime is not asked/],
  ])('refuses, running nothing, with %s', async (_name, socket, why) => {
    const leak = attachment('gone', '10.5.0.9', [{ type: 'fakebr' }]);
    const r = await gc(['--apply'], socket(dir));
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^cnirec: cannot ask the container runtime which sandboxes it has \(.*\), so no attachment can be confirmed leaked: nothing was run\.\n$/);
    expect(r.stderr).toMatch(why);
    expect(existsSync(leak.file)).toBe(true);
    expect(calls()).toEqual([]);
  });

  it('refuses while the runtime says it is not ready yet', async () => {
    fake!.state.conditions = [{ type: 'RuntimeReady', status: false, reason: 'Starting' }];
    attachment('gone', '10.5.0.9', [{ type: 'fakebr' }]);
    const r = await gc(['--apply']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('says RuntimeReady=false (Starting)');
    expect(calls()).toEqual([]);
  });

  it('says what is wrong with a flag, with the usage', async () => {
    const r = await cnirec(['gc', '--cri-endpoint', 'tcp://10.0.0.1:1'], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--cri-endpoint: must be a unix socket path or a unix:// URL');
    expect(r.stderr).toContain('usage: cnirec gc');
  });
});

/**
 * The runtime's side against Debian's real containerd 1.6 (its CRI plugin and
 * runc), started here on a private socket, root and state dir with a CNI conf
 * dir of the test's own (bridge + host-local), pods made with CRI
 * RunPodSandbox as a kubelet makes them, and the real daemon with real
 * bpftrace asking containerd every second:
 * - readiness: an empty conf dir is NetworkReady=false ("cni plugin not
 *   initialized"), the critical network-not-ready finding; the conf written,
 *   ready and resolved; moved away, not ready again, naming the removal; back,
 *   resolved — on the API, /metrics, the tail, doctor;
 * - sandboxes beside their recorded ADDs (pod, UID, sandbox id, containerd
 *   the caller), the runtime's state and IP on the pod's story and `cnirec pod`;
 * - a real leak (the sandbox's task killed and its container removed with
 *   ctr, containerd restarted): leaked-attachment confirmed, the live pod not
 *   flagged; `cnirec gc` lists it and frees nothing; refuses while containerd
 *   is stopped; `--apply` frees it (cache entry and reservation gone, the DEL
 *   recorded with cnirec as its caller) and the finding resolves;
 * - a bundle of the daemon, opened with `cnirec open`: the runtime's view,
 *   each sandbox's runtime and the gc plan as the live daemon's, marked
 *   recorded, on the API, `cnirec pod` and the status page;
 * - bad runtimes: no socket, a socket that is no CRI runtime, a v1alpha2-only
 *   one and one that hangs (which never delays recording).
 */

import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cnirec } from '../integration/cli-harness.js';
import type { Browser } from 'playwright-core';
import type { StoredCallSummary } from '../../store/index.js';
import { startFakeCri, type FakeCri } from '../support/fake-cri.js';
import { launchChromium, openPage } from './support/browser.js';
import { containerdProblem, startContainerd, type Containerd } from './support/containerd.js';
import { startDaemon, type RunningDaemon } from './support/daemon.js';
import { openBundle } from './support/open-bundle.js';
import { execPlugin } from './support/plugin-driver.js';
import { requirePrivilegedSuite } from './support/privileged.js';
import { run } from './support/proc.js';

const privileged = requirePrivilegedSuite();
const problem = privileged ? containerdProblem() : null;
if (problem) {
  if (process.env.CI) {
    describe('the runtime e2e suite', () => {
      it('can run containerd on this machine', () => {
        throw new Error(`cannot run under CI: ${problem}`);
      });
    });
  } else console.warn(`skipping the runtime e2e suite: ${problem}`);
}
const canRun = privileged && problem === null;

const NETWORK = 'cnirec-rt';
const BRIDGE = 'cnirt0';
const NS = 'e2e-runtime';
const CONFLIST = '10-cnirec-rt.conflist';
const conflist = JSON.stringify({
  cniVersion: '1.0.0',
  name: NETWORK,
  plugins: [{ type: 'bridge', bridge: BRIDGE, isGateway: true, ipMasq: false, ipam: { type: 'host-local', ranges: [[{ subnet: '10.97.41.0/24' }]] } }],
});
const RESULTS = '/var/lib/cni/results';
const RESERVATIONS = `/var/lib/cni/networks/${NETWORK}`;

interface Condition {
  type: string;
  status: boolean;
  reason: string;
  message: string;
  since: string;
}
interface RuntimeBody {
  endpoint: string | null;
  reachable: boolean;
  name: string | null;
  version: string | null;
  conditions: Condition[];
  transitions: { at: string; type: string; status: boolean; reason: string; message: string }[];
  error: string | null;
  errorKind: string | null;
  leaks: { judging: boolean; confirmed: number };
}
interface FindingView {
  kind: string;
  severity: string;
  subject: string;
  message: string;
  path: string | null;
  containerId: string | null;
  network: string | null;
  ip: string | null;
  resolvedAt: string | null;
}
interface GcItem {
  containerId: string;
  network: string | null;
  ifName: string | null;
  addresses: string[];
  cachePath: string | null;
  reservationPaths: string[];
  netns: string | null;
  freeable: boolean;
  outcome?: { result: string; plugins?: string[]; reservationsLeft?: string[]; error?: string };
}

const networkReady = (r: RuntimeBody) => r.conditions.find((c) => c.type === 'NetworkReady');

describe.runIf(canRun)("the runtime's side, with the real containerd", () => {
  let ctrd: Containerd;
  let daemon: RunningDaemon;
  let tail: WebSocket;
  let browser: Browser | null = null;
  /** The web view's page at `route` (of the daemon, or of `base`), its text once `selector` shows, and what went wrong in it. */
  const webPage = async (route: string, selector: string, base = daemon.url) => {
    browser ??= await launchChromium();
    const { page, problems, close } = await openPage(browser);
    try {
      await page.goto(`${base}${route}`);
      const el = page.locator(selector).first();
      await el.waitFor({ timeout: 20_000 });
      return { text: await el.innerText(), attrs: await el.evaluate((n) => Object.fromEntries([...n.attributes].map((a) => [a.name, a.value]))), problems: [...problems] };
    } finally {
      await close();
    }
  };
  const tailMessages: { type: string; runtime?: RuntimeBody }[] = [];
  const ids: { web?: string; leaky?: string } = {};
  /** The pods' netns paths (from their recorded ADDs: Debian's containerd caches none), deleted at the end if any is left. */
  const netnsPaths = new Set<string>();

  const get = async <T>(route: string): Promise<T> => {
    const res = await fetch(`${daemon.url}${route}`);
    if (!res.ok) throw new Error(`${route}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const poll = async <T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 30_000): Promise<T> => {
    const end = Date.now() + timeoutMs;
    let last: unknown = null;
    for (;;) {
      try {
        const v = await probe();
        if (v) return v;
      } catch (err) {
        last = err;
      }
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? ` (${String(last)})` : ''}\n${daemon.logs().slice(-2500)}\n--- containerd:\n${ctrd.logs().slice(-1500)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  const runtime = () => get<RuntimeBody>('/api/v1/node/runtime');
  const findings = (kind: string, resolved = false) => get<{ items: FindingView[] }>(`/api/v1/findings?kind=${kind}${resolved ? '&includeResolved=true' : ''}`).then((b) => b.items);
  const metrics = async () => (await fetch(`${daemon.url}/metrics`)).text();
  const gc = (args: string[]) => cnirec(['gc', '--cri-endpoint', ctrd.socket, '--cni-bin-dir', '/usr/lib/cni', ...args], { timeoutMs: 60_000 });
  const cacheFilesOf = (id: string) => (existsSync(RESULTS) ? readdirSync(RESULTS).filter((f) => f.includes(id)) : []);
  const reservationsOf = (ip: string) => existsSync(path.join(RESERVATIONS, ip));
  /** The test network's libcni cache files (`<network>-<container>-<ifname>`) and host-local reservations, whoever left them. */
  const clearNetworkFiles = () => {
    if (existsSync(RESULTS)) for (const f of readdirSync(RESULTS)) if (f.startsWith(`${NETWORK}-`)) rmSync(path.join(RESULTS, f), { force: true });
    rmSync(RESERVATIONS, { recursive: true, force: true });
  };
  /**
   * A gc plan's items that are not the leak this test made: each with whether containerd lists it (it never may)
   * and what the daemon recorded for its container id (who ran ADD and DEL, when, how it ended), after every ADD
   * and DEL recorded in the test's network — so an unexpected item explains itself in the failure.
   */
  const othersIn = async (items: readonly GcItem[]) => {
    const listed = await ctrd.sandboxIds();
    const others = items.filter((i) => i.containerId !== ids.leaky);
    if (others.length === 0) return { others, listed, explain: '' };
    const line = (c: Pick<StoredCallSummary, 'startedAtUs' | 'command' | 'plugin' | 'containerId' | 'podNamespace' | 'podName' | 'parentComm' | 'ppid' | 'ok'>) =>
      `${new Date(c.startedAtUs / 1000).toISOString()} ${c.command} ${c.plugin} ${c.containerId?.slice(0, 12)} pod ${c.podNamespace}/${c.podName} by ${c.parentComm} (${c.ppid}) ok=${c.ok}`;
    const explain = [
      `gc plan items other than the leak made (${ids.leaky}); containerd lists: ${listed.join(', ') || 'none'}`,
      ...others.map((i) => [`- ${i.containerId} ${i.network} ${i.addresses.join(',')} cache ${i.cachePath} reservations ${i.reservationPaths.join(',')}`, ...daemon.callsFor(i.containerId).map((c) => `    ${line(c)}`)].join('\n')),
      `every call recorded in ${NETWORK}:`,
      ...daemon.store.listCalls({ network: NETWORK }, 1000).items.map((c) => `    ${line(c)}`),
      `--- containerd:\n${ctrd.logs().slice(-4000)}`,
    ].join('\n');
    return { others, listed, explain };
  };

  beforeAll(async () => {
    // What an earlier run left in this network (a reservation host-local would skip, a cache entry gc would list) goes first.
    clearNetworkFiles();
    ctrd = await startContainerd();
    daemon = await startDaemon({
      extraArgs: ['--cri-endpoint', `unix://${ctrd.socket}`, '--cri-poll-interval', '1s', '--cni-conf-dir', ctrd.confDir, '--cni-bin-dir', '/usr/lib/cni', '--cache-rescan-ms', '1000'],
    });
    tail = new WebSocket(`${daemon.url.replace('http', 'ws')}/api/v1/tail`);
    tail.on('message', (data) => tailMessages.push(JSON.parse(data.toString()) as { type: string }));
    await new Promise((resolve) => tail.once('open', resolve));
  }, 180_000);

  afterAll(async () => {
    tail?.close();
    const steps: [string, () => Promise<unknown>][] = [
      ['close the browser', async () => browser?.close()],
      ['stop the daemon', async () => daemon?.stop()],
      ['stop containerd', async () => ctrd?.destroy()],
      [
        'delete the netns left',
        async () => {
          for (const p of netnsPaths) {
            if (!existsSync(p)) continue;
            const r = await run('ip', ['netns', 'delete', path.basename(p)]);
            if (r.code !== 0) console.warn(`cleanup: ip netns delete ${path.basename(p)}: ${r.stderr}`);
          }
        },
      ],
      ['delete the bridge', async () => run('ip', ['link', 'del', BRIDGE])],
    ];
    for (const [what, step] of steps) await step().catch((err: unknown) => console.warn(`cleanup: cannot ${what}: ${String(err)}`));
    clearNetworkFiles();
  }, 60_000);

  it('keeps the runtime’s readiness as a timeline: not ready without a conf, ready with one, not ready again once it is moved away', async () => {
    // An empty conf dir: what every node says before its CNI is installed.
    const notReady = await poll('NetworkReady=false', async () => {
      const r = await runtime();
      return r.reachable && networkReady(r)?.status === false ? r : null;
    });
    expect(notReady).toMatchObject({ endpoint: ctrd.socket, name: 'containerd', error: null });
    expect(notReady.version).toMatch(/^1\.6\./);
    expect(networkReady(notReady)).toMatchObject({ reason: 'NetworkPluginNotReady', message: expect.stringContaining('cni plugin not initialized') });
    expect(notReady.conditions.find((c) => c.type === 'RuntimeReady')?.status).toBe(true);
    const [finding] = await poll('network-not-ready', async () => (await findings('network-not-ready')).filter((f) => f.subject === 'runtime NetworkReady'));
    expect(finding).toMatchObject({ severity: 'critical', resolvedAt: null });
    expect(finding!.message).toContain('NetworkPluginNotReady');
    expect(finding!.message).toContain('cni plugin not initialized');
    expect(finding!.message).toContain('containerd');
    const m = await metrics();
    expect(m).toMatch(/^cnirec_runtime_reachable 1$/m);
    expect(m).toMatch(/^cnirec_runtime_condition\{type="NetworkReady"\} 0$/m);
    expect(m).toMatch(/^cnirec_runtime_condition\{type="RuntimeReady"\} 1$/m);
    const doctor = await cnirec(['doctor', '--cni-conf-dir', ctrd.confDir, '--cni-bin-dir', '/usr/lib/cni'], { api: daemon.url });
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(/runtime \(CRI\)[\s\S]*NetworkReady\s+false[\s\S]*cni plugin not initialized/);
    const status = await webPage('/ui/status', '.runtime[data-network-ready="false"]');
    expect(status.text).toContain('network not ready');
    expect(status.text).toMatch(/NetworkReady\s+false[\s\S]*NetworkPluginNotReady: Network plugin returns error: cni plugin not initialized/);
    expect(status.problems).toEqual([]);

    writeFileSync(path.join(ctrd.confDir, CONFLIST), conflist);
    const ready = await poll('NetworkReady=true', async () => {
      const r = await runtime();
      return networkReady(r)?.status === true ? r : null;
    });
    const net = ready.transitions.filter((t) => t.type === 'NetworkReady');
    expect(net.map((t) => t.status)).toEqual([true, false]);
    // One row per change, none per poll: a second's polls since added nothing.
    await new Promise((r) => setTimeout(r, 2500));
    expect((await runtime()).transitions.filter((t) => t.type === 'NetworkReady')).toHaveLength(2);
    await poll('the finding resolved', async () => (await findings('network-not-ready', true)).find((f) => f.subject === 'runtime NetworkReady' && f.resolvedAt !== null));
    expect(await metrics()).toMatch(/^cnirec_runtime_condition\{type="NetworkReady"\} 1$/m);
    await poll('the tail told', async () => tailMessages.some((t) => t.type === 'runtime.readiness' && t.runtime && networkReady(t.runtime)?.status === true));

    // Moved away (as an operator does by mistake): the runtime notices, and the finding names the change.
    const aside = path.join(ctrd.dir, CONFLIST);
    renameSync(path.join(ctrd.confDir, CONFLIST), aside);
    const again = await poll('a second network-not-ready', async () => (await findings('network-not-ready')).find((f) => f.subject === 'runtime NetworkReady'));
    expect(again.message).toContain(`${path.join(ctrd.confDir, CONFLIST)} was removed`);
    expect(again.path).toBe(path.join(ctrd.confDir, CONFLIST));
    // Back as `cp` puts it (containerd 1.6 reloads on a write, not on a file renamed into the dir).
    writeFileSync(path.join(ctrd.confDir, CONFLIST), readFileSync(aside));
    rmSync(aside);
    await poll('ready again', async () => networkReady(await runtime())?.status === true);
    await poll('resolved again', async () => (await findings('network-not-ready')).every((f) => f.subject !== 'runtime NetworkReady'));
  }, 90_000);

  it('puts each sandbox the runtime has beside the ADD calls recorded for it', async () => {
    ids.web = await ctrd.runPodSandbox({ namespace: NS, name: 'web', uid: 'uid-web-1' });
    ids.leaky = await ctrd.runPodSandbox({ namespace: NS, name: 'leaky', uid: 'uid-leaky-1' });
    for (const [name, id] of [['web', ids.web], ['leaky', ids.leaky]] as const) {
      const add = await daemon.waitFor(`the bridge ADD of ${name}`, () => daemon.callsFor(id).find((c) => c.command === 'ADD' && c.plugin === 'bridge' && c.parentId === null));
      expect(add).toMatchObject({ podNamespace: NS, podName: name, podUid: `uid-${name}-1`, podInfraContainerId: id, containerId: id, ok: true, parentComm: 'containerd' });
      if (add.netns) netnsPaths.add(add.netns);
    }
    const story = await poll('the runtime’s state on the pod’s story', async () => {
      const s = await get<{ sandboxes: { containerId: string; runtime: { state: string; ip: string | null; labels: Record<string, string>; goneAt: string | null } | null; cache: { ips: string[]; networkName: string | null; netns: string | null }[] }[] }>(
        `/api/v1/pods/${NS}/web`,
      );
      const sb = s.sandboxes.find((x) => x.containerId === ids.web);
      return sb?.runtime?.ip ? sb : null;
    });
    const cached = story.cache.find((e) => e.networkName === NETWORK)!;
    expect(story.runtime).toMatchObject({ state: 'ready', ip: cached.ips[0], goneAt: null });
    expect(story.runtime!.labels['io.kubernetes.pod.uid']).toBe('uid-web-1');
    const pod = await cnirec(['pod', `${NS}/web`], { api: daemon.url });
    expect(pod.code).toBe(0);
    expect(pod.stdout).toContain(`runtime: ready, ${cached.ips[0]}`);
    const page = await webPage(`/ui/pods/${NS}/web`, '.sandbox-runtime[data-state="ready"]');
    expect(page.text).toContain(`Runtime: ready, ${cached.ips[0]}`);
    expect(page.problems).toEqual([]);
  }, 90_000);

  it('confirms a leak the runtime made, and never calls the live sandbox leaked', async () => {
    const leaky = ids.leaky!;
    const before = await get<{ items: { containerId: string; networkName: string; ips: string[] }[] }>(`/api/v1/cache?containerId=${leaky}`);
    const entry = before.items.find((e) => e.networkName === NETWORK)!;
    // Behind containerd's back: its task killed, its container removed, containerd restarted.
    await ctrd.leak(leaky);
    const leaked = await poll(
      'leaked-attachment',
      async () => (await findings('leaked-attachment')).find((f) => f.containerId === leaky && f.network === NETWORK),
      60_000,
    );
    expect(leaked).toMatchObject({ severity: 'warning', ip: entry.ips[0] });
    expect(leaked.message).toContain(entry.ips[0]);
    expect(leaked.message).toContain('eth0');
    expect(await findings('leaked-attachment')).not.toContainEqual(expect.objectContaining({ containerId: ids.web }));
    // The runtime can say, so the guess does not.
    expect((await findings('leaked-ip')).filter((f) => f.containerId === leaky)).toEqual([]);
    const story = await get<{ sandboxes: { containerId: string; runtime: { goneAt: string | null; state: string } | null }[] }>(`/api/v1/pods/${NS}/leaky`);
    // Its last known state (the poll between the kill and the restart may have seen it not ready) is kept.
    expect(story.sandboxes.find((s) => s.containerId === leaky)?.runtime).toMatchObject({ state: expect.stringMatching(/^(ready|notready)$/), goneAt: expect.any(String) });
    const plan = await get<{ judging: boolean; items: GcItem[] }>('/api/v1/node/cni/gc-plan');
    expect(plan.judging).toBe(true);
    const { others, listed, explain } = await othersIn(plan.items);
    if (others.length > 0) console.warn(explain);
    // No sandbox containerd lists is ever in the plan, the live pod's least of all.
    expect(listed).toContain(ids.web);
    expect(plan.items.filter((i) => listed.includes(i.containerId)), explain).toEqual([]);
    expect(plan.items.find((i) => i.containerId === leaky && i.network === NETWORK), explain).toMatchObject({ ifName: 'eth0', addresses: [entry.ips[0]], freeable: true });
    // Per network, as many as the plan has there: the leak made here, and any other containerd itself left.
    const inNetwork = plan.items.filter((i) => i.network === NETWORK).length;
    expect(await metrics()).toMatch(new RegExp(`^cnirec_leaked_attachments\\{network="${NETWORK}"\\} ${inNetwork}$`, 'm'));
  }, 90_000);

  it('takes a bundle of the daemon that, opened elsewhere, tells the runtime’s side as the live daemon did, marked recorded', async () => {
    const file = path.join(ctrd.dir, 'runtime-bundle.tar.gz');
    const made = await cnirec(['bundle', '--since', '30m', '-o', file], { api: daemon.url, timeoutMs: 120_000 });
    expect(made.code, made.stderr).toBe(0);
    const liveView = await runtime();
    const liveStory = async (pod: string) => get<{ sandboxes: { containerId: string; runtime: Record<string, unknown> | null }[] }>(`/api/v1/pods/${NS}/${pod}`);
    const livePlan = await get<{ items: GcItem[] }>('/api/v1/node/cni/gc-plan');
    const opened = await openBundle(file);
    try {
      const from = async <T>(route: string): Promise<T> => (await (await fetch(`${opened.url}${route}`)).json()) as T;
      const view = await from<RuntimeBody & { lastCheckedAt: string; recorded: { from: string; takenAt: string; note: string } }>('/api/v1/node/runtime');
      // What does not move between two polls of a runtime that did not change.
      const steady = (r: RuntimeBody) => ({ endpoint: r.endpoint, reachable: r.reachable, name: r.name, version: r.version, conditions: r.conditions, transitions: r.transitions, errorKind: r.errorKind, confirmed: r.leaks.confirmed });
      expect(steady(view)).toEqual(steady(liveView));
      expect(view.recorded).toMatchObject({ from: 'daemon' });
      expect(Date.parse(view.lastCheckedAt)).toBeLessThanOrEqual(Date.parse(view.recorded.takenAt));
      for (const pod of ['web', 'leaky']) {
        const [bundled, lived] = [await from<Awaited<ReturnType<typeof liveStory>>>(`/api/v1/pods/${NS}/${pod}`), await liveStory(pod)];
        const runtimeOf = (s: typeof bundled) => s.sandboxes.map((x) => x.runtime && { ...x.runtime, seenAt: undefined });
        expect(runtimeOf(bundled), pod).toEqual(runtimeOf(lived));
      }
      const plan = await from<{ items: GcItem[]; recorded: { from: string } }>('/api/v1/node/cni/gc-plan');
      expect(plan.items).toEqual(livePlan.items);
      expect(plan.recorded.from).toBe('daemon');
      const pod = await cnirec(['pod', `${NS}/web`], { api: opened.url });
      expect(pod.stdout).toMatch(/runtime: ready, 10\.97\.41\.\d+/);
      const status = await webPage('/ui/status', '.runtime[data-recorded="daemon"]', opened.url);
      expect(status.text).toContain('containerd 1.6.');
      expect(status.text).toContain('recorded, not live');
      expect(status.problems).toEqual([]);
    } finally {
      await opened.stop();
      rmSync(file, { force: true });
    }

    // From the database alone (as with the daemon down): the command asks containerd itself.
    const alone = path.join(ctrd.dir, 'runtime-db-bundle.tar.gz');
    const unpacked = mkdtempSync(path.join(ctrd.dir, 'unpacked-'));
    try {
      const r = await cnirec(['bundle', '--db', daemon.dbPath, '--cri-endpoint', `unix://${ctrd.socket}`, '--since', '30m', '--no-payloads', '-o', alone], { timeoutMs: 120_000 });
      expect(r.code, r.stderr).toBe(0);
      expect((await run('tar', ['-xzf', alone, '-C', unpacked])).code).toBe(0);
      const read = (name: string) => JSON.parse(readFileSync(path.join(unpacked, name), 'utf8')) as Record<string, unknown>;
      const asked = read('node/runtime.json') as { reachable: boolean; name: string; conditions: Condition[]; sandboxes: { id: string; name: string; state: string }[] };
      expect(asked).toMatchObject({ reachable: true, name: 'containerd', endpoint: ctrd.socket, errorKind: null });
      expect(asked.conditions.find((c) => c.type === 'NetworkReady')?.status).toBe(true);
      expect(asked.sandboxes.map((x) => x.id)).toContain(ids.web);
      expect(asked.sandboxes.map((x) => x.id)).not.toContain(ids.leaky);
      expect(read('node/versions.json')).toMatchObject({ cri: { from: 'runtime', name: 'containerd', version: liveView.version, apiVersion: 'v1' } });
      expect(read('manifest.json')).toMatchObject({ daemon: { answered: false } });
    } finally {
      rmSync(alone, { force: true });
      rmSync(unpacked, { recursive: true, force: true });
    }
  }, 90_000);

  it('lists the leak on a dry run of cnirec gc, and frees nothing', async () => {
    const dry = await gc(['--min-age', '5s', '--json']);
    expect(dry.code, dry.stderr).toBe(0);
    const body = JSON.parse(dry.stdout) as { applied: boolean; items: GcItem[] };
    expect(body.applied).toBe(false);
    const { listed, explain } = await othersIn(body.items);
    expect(listed).toContain(ids.web);
    expect(body.items.filter((i) => listed.includes(i.containerId)), explain).toEqual([]);
    expect(body.items.find((i) => i.containerId === ids.leaky && i.network === NETWORK), explain).toMatchObject({ freeable: true });
    const text = await gc(['--min-age', '5s']);
    expect(text.stdout).toContain('dry run, nothing was freed');
    expect(cacheFilesOf(ids.leaky!).length).toBeGreaterThan(0);
  }, 60_000);

  it('refuses to run anything while containerd is stopped', async () => {
    const files = cacheFilesOf(ids.leaky!);
    await ctrd.stop();
    try {
      const refused = await gc(['--apply', '--min-age', '5s']);
      expect(refused.code).toBe(1);
      expect(refused.stderr.trim().split('\n')).toHaveLength(1);
      expect(refused.stderr).toMatch(/cannot ask the container runtime which sandboxes it has .*: nothing was run\.$/m);
      expect(cacheFilesOf(ids.leaky!)).toEqual(files);
      await poll('the daemon sees it gone', async () => !(await runtime()).reachable);
      expect(await metrics()).toMatch(/^cnirec_runtime_reachable 0$/m);
    } finally {
      await ctrd.start();
    }
  }, 60_000);

  it('frees the leak with cnirec gc --apply, records the DEL with cnirec as its caller, and resolves the finding', async () => {
    const leaky = ids.leaky!;
    const entry = (await get<{ items: { containerId: string; networkName: string; ips: string[] }[] }>(`/api/v1/cache?containerId=${leaky}`)).items.find((e) => e.networkName === NETWORK)!;
    const webFiles = cacheFilesOf(ids.web!);
    const applied = await gc(['--apply', '--min-age', '5s', '--json']);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    const items = (JSON.parse(applied.stdout) as { items: GcItem[] }).items;
    const { listed, explain } = await othersIn(items);
    expect(items.find((i) => i.containerId === leaky && i.network === NETWORK)?.outcome, explain).toEqual({ result: 'freed', plugins: ['bridge'], reservationsLeft: [] });
    // It ran no DEL for a sandbox containerd lists; whatever else it found containerd no longer has, and freed it too.
    expect(listed).toContain(ids.web);
    expect(items.filter((i) => listed.includes(i.containerId)), explain).toEqual([]);
    expect(items.filter((i) => i.outcome?.result !== 'freed'), explain).toEqual([]);
    expect(cacheFilesOf(leaky)).toEqual([]);
    expect(reservationsOf(entry.ips[0]!)).toBe(false);
    // The live pod is untouched.
    expect(cacheFilesOf(ids.web!)).toEqual(webFiles);
    const del = await daemon.waitFor('the DEL gc ran, recorded', () => daemon.callsFor(leaky).find((c) => c.command === 'DEL' && c.plugin === 'bridge' && c.parentId === null));
    expect(del).toMatchObject({ ok: true, parentComm: 'cnirec', podNamespace: NS, podName: 'leaky' });
    expect(daemon.callsFor(leaky).some((c) => c.command === 'DEL' && c.plugin === 'host-local' && c.parentId === del.id)).toBe(true);
    await poll('the finding resolved', async () => (await findings('leaked-attachment')).every((f) => f.containerId !== leaky), 30_000);
    expect((await runtime()).conditions.find((c) => c.type === 'NetworkReady')?.status).toBe(true);
  }, 90_000);
});

describe.runIf(canRun)('a runtime that cannot be asked', () => {
  let dir: string;
  const servers: Server[] = [];
  const fakes: FakeCri[] = [];
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cnirec-bad-cri-'));
  });
  afterAll(async () => {
    for (const s of servers) s.close();
    for (const f of fakes) await f.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const listen = async (name: string, onConnection: (s: import('node:net').Socket) => void) => {
    const server = createServer(onConnection);
    servers.push(server);
    const socket = path.join(dir, name);
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    return socket;
  };
  const doctor = (socket: string) => cnirec(['doctor', '--no-daemon', '--cri-endpoint', socket], { timeoutMs: 30_000 });

  it.each([
    ['no socket', async () => path.join(dir, 'absent.sock'), /No CRI socket at .*absent\.sock/],
    ['a socket that is not a CRI runtime', () => listen('http.sock', (s) => s.once('data', () => s.end('HTTP/1.1 400 Bad Request\r\n\r\n'))), /answers, but not as a CRI runtime/],
    [
      'a runtime that speaks only CRI v1alpha2',
      async () => {
        const f = await startFakeCri('v1alpha2', { name: 'containerd', version: '1.5.18' });
        fakes.push(f);
        return f.socket;
      },
      /\(containerd 1\.5\.18\) speaks only the CRI v1alpha2/,
    ],
    ['a runtime that hangs', () => listen('hang.sock', () => undefined), /did not answer Version within 3 s/],
  ])('says so with %s: doctor in a sentence, gc refusing', async (_name, make, sentence) => {
    const socket = await make();
    const d = await doctor(socket);
    expect(d.stdout).toMatch(sentence);
    const g = await cnirec(['gc', '--cri-endpoint', socket], { timeoutMs: 30_000 });
    expect(g.code).toBe(1);
    expect(g.stderr).toMatch(/nothing was run\.\n$/);
  }, 30_000);

  it('never delays recording: the daemon asking a runtime that hangs records a plugin call as fast as ever', async () => {
    const hang = await listen('hang-daemon.sock', () => undefined);
    const daemon = await startDaemon({ extraArgs: ['--cri-endpoint', hang, '--cri-poll-interval', '1s'] });
    try {
      const id = `cnirec-hang-${Date.now()}`;
      const started = Date.now();
      const r = await execPlugin({ plugin: '/usr/lib/cni/loopback', command: 'VERSION', containerId: id, netns: '', ifname: '', stdin: '{"cniVersion":"1.0.0","name":"x","type":"loopback"}' });
      expect(r.exitCode).toBe(0);
      await daemon.waitFor('the VERSION call recorded', () => daemon.callsFor(id, { includeVersion: true }).length > 0, 10_000);
      // Recorded within the usual second, while every poll of the runtime waits out its deadline.
      expect(Date.now() - started).toBeLessThan(5_000);
      const deadline = Date.now() + 20_000;
      let body: RuntimeBody | null = null;
      while (Date.now() < deadline) {
        body = (await (await fetch(`${daemon.url}/api/v1/node/runtime`)).json()) as RuntimeBody;
        if (body.errorKind !== null) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(body).toMatchObject({ reachable: false, errorKind: 'timeout', error: expect.stringContaining('did not answer Version within 5 s') });
    } finally {
      await daemon.stop();
    }
  }, 120_000);
});

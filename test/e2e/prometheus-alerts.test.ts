/**
 * The alert rules in a real Prometheus scraping a recording daemon (real bpftrace, the reference bridge
 * plugin in a network namespace): no alert while every ADD succeeds, and CNIAddFailing firing — naming the
 * network, the plugin and the command to run — once the plugin starts failing (a bridge whose IPAM plugin
 * does not exist). The rules are deploy/prometheus/cnirec-rules.yaml with every `for:` cut to 2 seconds, so
 * the test waits seconds rather than the minutes a real alert waits before it fires; expressions and
 * windows are the shipped ones.
 */

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { startDaemon, type RunningDaemon } from './support/daemon.js';
import { configBytes, createTestBridgeNetwork, withNetns, type Netns, type TestBridgeNetwork } from './support/netns.js';
import { CNI_BIN_DIR, execPlugin, podCniArgs } from './support/plugin-driver.js';
import { requirePrivilegedSuite } from './support/privileged.js';
import { prometheusProblem, startPrometheus, type RunningPrometheus } from './support/prometheus.js';

const RULES = path.resolve(import.meta.dirname, '../../deploy/prometheus/cnirec-rules.yaml');

/** The shipped rules with every `for:` cut to 2 s: long enough to go pending first, short enough for a test. */
function testRules(): object {
  const rules = YAML.parse(readFileSync(RULES, 'utf8')) as { groups: { rules: { for?: string }[] }[] };
  for (const g of rules.groups) for (const r of g.rules) if (r.for !== undefined && r.for !== '0m') r.for = '2s';
  return rules;
}

describe('the alerts e2e', () => {
  it('finds Prometheus', () => {
    if (process.env.CI) expect(prometheusProblem()).toBeNull();
  });
});

const canRun = requirePrivilegedSuite() && prometheusProblem() === null;

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | null>, context: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== null) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${context()}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

describe.runIf(canRun)('alerts raised by a real Prometheus over a recording daemon', () => {
  let daemon: RunningDaemon;
  let prom: RunningPrometheus;
  let net: TestBridgeNetwork;
  let netns: Netns;
  const ns = `alerts-${Date.now().toString(36)}`;

  beforeAll(async () => {
    [daemon, net, netns] = await Promise.all([startDaemon(), createTestBridgeNetwork('cnirec-alert'), withNetns('cnirec-alert')]);
    prom = await startPrometheus({ targets: [new URL(daemon.url).host], labels: { node: 'e2e-node' }, rules: testRules() });
  }, 120_000);

  afterAll(async () => {
    await prom?.stop();
    await netns?.remove();
    await net?.cleanup();
    await daemon?.stop();
  });

  const add = (container: string, config: object) =>
    execPlugin({ plugin: `${CNI_BIN_DIR}/bridge`, command: 'ADD', containerId: container, netns: netns.path, ifname: 'eth0', cniArgs: podCniArgs(ns, 'web-0', 'uid-web-0', container), stdin: configBytes(config) });
  // Alerts about this test's network, or about the node itself (no network): a shared machine may run other
  // plugins meanwhile, whose calls the daemon records too.
  const ours = (a: { labels: Record<string, string> }) => a.labels.network === undefined || a.labels.network === net.name;
  const firing = async () => (await prom.alerts()).filter((a) => (a.state === 'firing' || a.state === 'pending') && ours(a));

  it('raises no alert while the node is healthy', async () => {
    for (let i = 0; i < 3; i++) {
      const container = `${ns}-ok-${i}`;
      expect((await add(container, net.config)).exitCode).toBe(0);
      await execPlugin({ plugin: `${CNI_BIN_DIR}/bridge`, command: 'DEL', containerId: container, netns: netns.path, ifname: 'eth0', stdin: configBytes(net.config) });
    }
    const query = `sum(cnirec_calls_total{command="ADD",outcome="ok",network="${net.name}"})`;
    await until('Prometheus to scrape the ADDs', 30_000, async () => ((await prom.scalar(query)) ?? 0) >= 3 || null, () => prom.logs());
    // A few more evaluations (every second), then nothing pending or firing.
    await new Promise((r) => setTimeout(r, 4000));
    expect(await firing()).toEqual([]);
  });

  it('raises CNIAddFailing, naming the node, the network, the plugin and the command to run, once ADDs fail', async () => {
    const broken = { ...net.config, ipam: { type: 'no-such-ipam' } };
    for (let i = 0; i < 8; i++) {
      expect((await add(`${ns}-bad-${i}`, broken)).exitCode).not.toBe(0);
      await new Promise((r) => setTimeout(r, 300));
    }
    const alert = await until(
      'CNIAddFailing to fire',
      60_000,
      async () => (await prom.alerts()).find((a) => a.labels.alertname === 'CNIAddFailing' && a.state === 'firing') ?? null,
      () => prom.logs(),
    );
    expect(alert.labels).toMatchObject({ severity: 'warning', node: 'e2e-node', network: net.name, plugin: 'bridge' });
    expect(alert.annotations.summary).toMatch(new RegExp(`^CNI ADDs of network "${net.name}" \\(bridge\\) fail on node e2e-node: \\d+ in 15 minutes$`));
    expect(alert.annotations.description).toContain(`cnirec calls --failed --command ADD --network ${net.name} --since 30m`);
    // That one alone: the failures are ADDs of one network, nothing else is wrong.
    expect((await firing()).map((a) => a.labels.alertname)).toEqual(['CNIAddFailing']);
  });
});

/**
 * `cnirec demo`: behaves like a container runtime for one pod — VERSION,
 * ADD, CHECK and DEL of the reference bridge plugin with host-local IPAM in
 * a throwaway network namespace — then shows what the running daemon
 * recorded. The bridge gets no host address and no routes (isGateway off),
 * so the node's own networking is untouched.
 */

import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runPlugin } from './plugin-runner.js';
import type { PodStory } from '../api/index.js';
import { DEFAULT_API, getJson, unreachable, type ClientOptions } from './api-client.js';
import { stdout } from './output.js';
import { countStoryCalls, formatPodStory } from './pod-command.js';

export class DemoError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DemoError';
  }
}

const PLUGIN_DIRS = ['/opt/cni/bin', '/usr/lib/cni', '/usr/libexec/cni'];

export async function runDemo(client: ClientOptions): Promise<number> {
  await requireDaemon(client);
  const cniPath = PLUGIN_DIRS.filter((d) => existsSync(path.join(d, 'bridge'))).join(':');
  if (!cniPath) throw new DemoError(`the CNI reference plugins were not found in ${PLUGIN_DIRS.join(', ')}: apt-get install -y containernetworking-plugins`);
  const bridge = path.join(cniPath.split(':')[0]!, 'bridge');

  const tag = randomBytes(3).toString('hex');
  const netnsName = `cnirec-demo-${tag}`;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'cnirec-demo-'));
  const pod = { namespace: 'cnirec-demo', name: `web-${tag}`, uid: randomUUID() };
  const containerId = randomBytes(32).toString('hex');
  const cniArgs = `IgnoreUnknown=1;K8S_POD_NAMESPACE=${pod.namespace};K8S_POD_NAME=${pod.name};K8S_POD_UID=${pod.uid};K8S_POD_INFRA_CONTAINER_ID=${containerId}`;
  const config = {
    cniVersion: '1.0.0',
    name: 'cnirec-demo',
    type: 'bridge',
    bridge: `cnirecdemo${tag.slice(0, 4)}`,
    isGateway: false,
    ipMasq: false,
    ipam: { type: 'host-local', dataDir, ranges: [[{ subnet: '10.254.254.0/24' }]] },
  };
  const base = { plugin: bridge, containerId, netns: `/var/run/netns/${netnsName}`, ifname: 'eth0', cniArgs, cniPath };

  sh('ip', ['netns', 'add', netnsName]);
  try {
    say(`pod ${pod.namespace}/${pod.name}, netns ${netnsName}, plugins from ${cniPath}`);
    await step('VERSION', () => runPlugin({ ...base, command: 'VERSION', stdin: JSON.stringify(config) }));
    const add = await step('ADD', () => runPlugin({ ...base, command: 'ADD', stdin: JSON.stringify(config) }));
    const prevResult = JSON.parse(add.stdout.toString('utf8')) as unknown;
    await step('CHECK', () => runPlugin({ ...base, command: 'CHECK', stdin: JSON.stringify({ ...config, prevResult }) }));
    await step('DEL', () => runPlugin({ ...base, command: 'DEL', stdin: JSON.stringify(config) }));
  } finally {
    sh('ip', ['netns', 'del', netnsName]);
    sh('ip', ['link', 'del', config.bridge]);
    rmSync(dataDir, { recursive: true, force: true });
  }

  await new Promise((r) => setTimeout(r, 1000));
  const route = `/api/v1/pods/${encodeURIComponent(pod.namespace)}/${encodeURIComponent(pod.name)}`;
  const story = await getJson<PodStory>(client, route);
  say(`\ncnirec recorded ${countStoryCalls(story)} calls for this pod:\n`);
  stdout.lines(formatPodStory(story));
  // The way back to this daemon, whichever it was.
  const api = client.api === DEFAULT_API ? '' : ` --api ${client.api}`;
  say(`\nsee them again: cnirec pod ${pod.namespace}/${pod.name}${api}, or curl '${client.api}${route}'`);
  return 0;
}

async function requireDaemon(client: ClientOptions): Promise<void> {
  const api = client.api;
  let health: { tracer?: { ready?: boolean } } | null;
  try {
    const res = await fetch(`${api}/healthz`, { signal: AbortSignal.timeout(client.timeoutMs) });
    health = (await res.json().catch(() => null)) as typeof health;
  } catch (err) {
    throw new DemoError(unreachable(client, err).message);
  }
  if (!health?.tracer?.ready) throw new DemoError(`the cnirec daemon at ${api} is not recording yet (see its /healthz)`);
}

async function step<T extends { exitCode: number | null; stdout: Buffer; stderr: Buffer }>(name: string, run: () => Promise<T>): Promise<T> {
  const res = await run();
  if (res.exitCode !== 0) {
    throw new DemoError(`${name} failed (exit ${res.exitCode}): ${res.stdout.toString('utf8').trim() || res.stderr.toString('utf8').trim()}`);
  }
  say(`  ${name.padEnd(8)} ok`);
  return res;
}

function sh(cmd: string, args: string[]): void {
  spawnSync(cmd, args, { stdio: 'ignore' });
}

function say(line: string): void {
  stdout.line(line);
}

// Network namespaces and CNI network configurations for e2e tests.
// Everything created here carries a unique name and can be removed twice without error.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run, runOk } from './proc.js';

export const NETNS_DIR = '/var/run/netns';

export interface Netns {
  name: string;
  /** /var/run/netns/<name>; pass this as CNI_NETNS. */
  path: string;
  /** Deletes the namespace; safe to call more than once. */
  remove(): Promise<void>;
}

let seq = 0;

/** A short unique suffix: pid, per-process counter and randomness (tests may run in parallel processes). */
export function uniqueSuffix(): string {
  seq += 1;
  return `${process.pid.toString(36)}${seq.toString(36)}${randomBytes(2).toString('hex')}`;
}

export async function createNetns(name: string): Promise<Netns> {
  await runOk('ip', ['netns', 'add', name]);
  let removed = false;
  return {
    name,
    path: `${NETNS_DIR}/${name}`,
    async remove(): Promise<void> {
      if (removed) return;
      removed = true;
      const r = await run('ip', ['netns', 'del', name]);
      if (r.code !== 0 && !/No such file|Cannot remove namespace file/.test(r.stderr)) {
        throw new Error(`ip netns del ${name} failed: ${r.stderr.trim()}`);
      }
    },
  };
}

/** Creates a namespace named `<prefix>-<unique>`. */
export function withNetns(prefix?: string): Promise<Netns>;
/** Creates a namespace, runs fn with it and always removes it afterwards. */
export function withNetns<T>(prefix: string, fn: (ns: Netns) => Promise<T>): Promise<T>;
export async function withNetns<T>(prefix = 'cnirec-e2e', fn?: (ns: Netns) => Promise<T>): Promise<Netns | T> {
  const ns = await createNetns(`${prefix}-${uniqueSuffix()}`);
  if (!fn) return ns;
  try {
    return await fn(ns);
  } finally {
    await ns.remove();
  }
}

/** Deletes a host link (e.g. the bridge the bridge plugin created; its DEL leaves it behind). */
export async function removeLink(name: string): Promise<void> {
  const r = await run('ip', ['link', 'del', name]);
  if (r.code !== 0 && !/Cannot find device|does not exist/.test(r.stderr)) {
    throw new Error(`ip link del ${name} failed: ${r.stderr.trim()}`);
  }
}

/** A Linux interface name (max 15 chars) that is unique for this test run. */
export function uniqueBridgeName(prefix = 'cnr'): string {
  return `${prefix}${randomBytes(4).toString('hex')}`.slice(0, 15);
}

const subnetsHandedOut = new Set<number>();

/**
 * Returns an unused 10.213.<n>.0/24 (n in 10..249): not handed out by this process before and
 * not overlapping any IPv4 route currently on the host (so parallel runs in other processes,
 * which leave a bridge route while they work, are avoided too).
 */
export async function allocTestSubnet(): Promise<string> {
  const r = await runOk('ip', ['-4', '-o', 'route', 'show', 'table', 'all']);
  const busy = new Set<number>();
  for (const m of r.stdout.matchAll(/\b10\.213\.(\d{1,3})\./g)) busy.add(Number(m[1]));
  const start = 10 + (process.pid % 240);
  for (let i = 0; i < 240; i++) {
    const n = 10 + ((start - 10 + i) % 240);
    if (busy.has(n) || subnetsHandedOut.has(n)) continue;
    subnetsHandedOut.add(n);
    return `10.213.${n}.0/24`;
  }
  throw new Error('no free 10.213.x.0/24 test subnet left');
}

/** Creates a fresh IPAM data directory under the OS temp dir (keeps /var/lib/cni/networks clean). */
export function makeIpamDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'cnirec-e2e-ipam-'));
}

export interface CniNetConfig {
  cniVersion: string;
  name: string;
  type: string;
  prevResult?: unknown;
  [key: string]: unknown;
}

export interface BridgeConfigOptions {
  /** Network name (the "name" field). */
  name: string;
  /** Host bridge device, max 15 chars (see uniqueBridgeName()). */
  bridge: string;
  /** e.g. 10.213.7.0/24 (see allocTestSubnet()). */
  subnet: string;
  cniVersion?: string;
  /** host-local dataDir; a fresh temp dir when omitted. */
  dataDir?: string;
  isGateway?: boolean;
  ipMasq?: boolean;
}

/** A single-plugin bridge + host-local configuration (a .conf, not a .conflist). */
export function bridgeConfig(opts: BridgeConfigOptions): CniNetConfig {
  return {
    cniVersion: opts.cniVersion ?? '1.0.0',
    name: opts.name,
    type: 'bridge',
    bridge: opts.bridge,
    isGateway: opts.isGateway ?? true,
    // No MASQUERADE rules by default: tests should not leave iptables state on the machine.
    ipMasq: opts.ipMasq ?? false,
    hairpinMode: false,
    ipam: {
      type: 'host-local',
      ranges: [[{ subnet: opts.subnet }]],
      routes: [{ dst: '0.0.0.0/0' }],
      dataDir: opts.dataDir ?? makeIpamDataDir(),
    },
  };
}

/** The config to send with CHECK (or DEL): the ADD result injected as prevResult. */
export function withPrevResult(config: CniNetConfig, addResult: Buffer | string | object): CniNetConfig {
  const prev: unknown =
    Buffer.isBuffer(addResult) || typeof addResult === 'string' ? JSON.parse(addResult.toString()) : addResult;
  return { ...config, prevResult: prev };
}

/** JSON bytes for a plugin's stdin. */
export function configBytes(config: object): Buffer {
  return Buffer.from(JSON.stringify(config), 'utf8');
}

export interface TestBridgeNetwork {
  name: string;
  bridge: string;
  subnet: string;
  dataDir: string;
  config: CniNetConfig;
  /** Deletes the bridge link and the IPAM dir; safe to call twice. */
  cleanup(): Promise<void>;
}

/** bridgeConfig() with a unique name, bridge, free subnet and temp dataDir, plus cleanup. */
export async function createTestBridgeNetwork(prefix = 'cnirec-e2e', cniVersion = '1.0.0'): Promise<TestBridgeNetwork> {
  const suffix = uniqueSuffix();
  const name = `${prefix}-${suffix}`;
  const bridge = uniqueBridgeName();
  const subnet = await allocTestSubnet();
  const dataDir = makeIpamDataDir();
  const config = bridgeConfig({ name, bridge, subnet, cniVersion, dataDir });
  let done = false;
  return {
    name,
    bridge,
    subnet,
    dataDir,
    config,
    async cleanup(): Promise<void> {
      if (done) return;
      done = true;
      await removeLink(bridge);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The DEL libcni's GC runs for a cached attachment that is no longer valid,
 * built from libcni's cache entry alone (libcni/api.go: GCNetworkList →
 * DelNetworkList with the cached netns, args and capability args): the
 * network's plugins in reverse order, each given its own config with the
 * list's `name` and `cniVersion`, the cached result as `prevResult` (CNI
 * 0.4.0 and later), and the capability args its `capabilities` ask for as
 * `runtimeConfig`. The config is the one cached at ADD time, so a conf file
 * changed or removed since does not change what is undone. Pure.
 */

import type { CacheEntry } from '../cache/index.js';
import { compareVersions, isVersion } from '../node-setup/index.js';

export interface DelStep {
  /** The plugin type: the binary looked up in the bin dirs. */
  readonly type: string;
  readonly stdin: string;
}

export interface DelPlan {
  readonly network: string;
  readonly cniVersion: string;
  /** In the order they run (the list reversed). */
  readonly steps: readonly DelStep[];
  /** CNI_COMMAND, CNI_CONTAINERID, CNI_NETNS, CNI_IFNAME and CNI_ARGS as libcni sets them (CNI_PATH is the runner's). */
  readonly env: Readonly<Record<string, string>>;
}

export type DelPlanResult = { readonly ok: true; readonly plan: DelPlan } | { readonly ok: false; readonly why: string };

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** a ≥ b for CNI versions ("0.3.1", "1.0.0"); an unparsable version is older than any, as libcni refuses it. */
export function cniVersionAtLeast(a: string, b: string): boolean {
  return isVersion(a) && isVersion(b) && compareVersions(a, b) >= 0;
}

export function delPlanOf(e: Pick<CacheEntry, 'format' | 'containerId' | 'networkName' | 'ifName' | 'netns' | 'cniArgs' | 'capabilityArgs' | 'config' | 'configProblem' | 'result'>): DelPlanResult {
  if (e.format !== 'cniCacheV1' || e.containerId === null || e.ifName === null || e.networkName === null) {
    return { ok: false, why: 'the cache file is not a cniCacheV1 entry naming its container, network and interface (libcni before 0.8): libcni cannot DEL from it either' };
  }
  if (!isObject(e.config)) return { ok: false, why: e.configProblem ? `its cached config cannot be used: ${e.configProblem}` : 'the cache entry holds no config to DEL with' };
  const list = e.config;
  const plugins: unknown[] = Array.isArray(list.plugins) ? list.plugins : [list];
  const name = typeof list.name === 'string' ? list.name : e.networkName;
  const cniVersion = typeof list.cniVersion === 'string' ? list.cniVersion : '';
  if (plugins.length === 0 || !plugins.every((p) => isObject(p) && typeof p.type === 'string' && p.type !== '')) {
    return { ok: false, why: 'its cached config has a plugin without a "type"' };
  }
  // Cached results on DEL came with CNI 0.4.0; before, plugins get none.
  const prevResult = cniVersionAtLeast(cniVersion, '0.4.0') && isObject(e.result) ? e.result : undefined;
  const capabilityArgs = isObject(e.capabilityArgs) ? e.capabilityArgs : {};
  const steps = (plugins as Json[])
    .map((p): DelStep => {
      const conf: Json = { ...p, name, cniVersion };
      if (prevResult !== undefined) conf.prevResult = prevResult;
      const caps = isObject(p.capabilities) ? p.capabilities : {};
      const runtimeConfig = Object.fromEntries(Object.keys(caps).filter((k) => caps[k] === true && k in capabilityArgs).map((k) => [k, capabilityArgs[k]]));
      if (Object.keys(runtimeConfig).length > 0) conf.runtimeConfig = runtimeConfig;
      return { type: p.type as string, stdin: JSON.stringify(conf) };
    })
    .reverse();
  return {
    ok: true,
    plan: {
      network: name,
      cniVersion,
      steps,
      env: {
        CNI_COMMAND: 'DEL',
        CNI_CONTAINERID: e.containerId,
        CNI_NETNS: e.netns ?? '',
        CNI_IFNAME: e.ifName,
        CNI_ARGS: e.cniArgs.map(([k, v]) => `${k}=${v}`).join(';'),
      },
    },
  };
}

/**
 * The daemon's side of GET /api/v1/bundle: a bundle of its own database,
 * with the node's setup read where it runs, its settings and its last log
 * lines. A refusal (a call not recorded, a bundle over maxBytes) goes back
 * to the client as a sentence; anything else is a failure of the daemon.
 */

import os from 'node:os';
import type { BundleDeps } from '../api/index.js';
import { askRuntimeOnce, type Redactor } from '../collector/index.js';
import { BUNDLE_CRI_TIMEOUT_MS } from './bundle-runtime.js';
import type { DaemonConfig } from './config.js';
import { bundleFileName, bundleRequest } from './bundle-request.js';
import { makeBundle, refusalOf, type BundleSetup } from './make-bundle.js';
import { settingsView } from './settings-view.js';

/** The node's name in bundles: the Kubernetes node (the DaemonSet sets NODE_NAME), else the host's. */
export function nodeName(env: NodeJS.ProcessEnv = process.env): string {
  return env.NODE_NAME || os.hostname();
}

export function bundleSetup(config: DaemonConfig, redactor: Redactor, env: NodeJS.ProcessEnv = process.env): Omit<BundleSetup, 'fallbackLog'> {
  return {
    db: config.db,
    node: nodeName(env),
    requested: { confDirs: config.cniConfDir, binDirs: config.cniBinDir },
    cacheDirs: config.cniCacheDirs,
    hostLocalDirs: config.hostLocalDirs,
    redactor,
    bpftrace: config.bpftrace,
    env,
    criEndpointAuto: config.criEndpoint.kind === 'auto',
    askRuntime: () => askRuntimeOnce(config.criEndpoint, { timeoutMs: BUNDLE_CRI_TIMEOUT_MS, sandboxes: true, redact: (m) => redactor.stringMap(m) }),
  };
}

export function createBundleWiring(config: DaemonConfig, redactor: Redactor, recentLogLines: () => readonly string[]): BundleDeps {
  const setup = bundleSetup(config, redactor);
  return {
    async make(query, readings) {
      const nowMs = Date.now();
      const request = bundleRequest(
        { sinceUs: query.since, untilUs: query.until, pods: query.pod, podUid: query.podUid, calls: query.call, payloads: query.payloads, maxBytes: query.maxBytes },
        nowMs,
      );
      try {
        const made = await makeBundle(request, setup, { ...readings, settings: settingsView(config), log: recentLogLines() }, nowMs);
        return { ok: true, file: made.file, name: bundleFileName(setup.node, request, nowMs), cleanup: made.cleanup };
      } catch (err) {
        return refusalOf(err);
      }
    },
  };
}

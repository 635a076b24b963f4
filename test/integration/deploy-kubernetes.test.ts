// deploy/kubernetes/cnirec.yaml: every object valid against the Kubernetes
// OpenAPI schemas (kubernetes-models, offline), and what makes it work on a
// node checked against the code it runs: the flags through the CLI's own
// parser and loadConfig, the probes against the real /healthz, the memory
// against the benchmark's measurements.
import fs from 'node:fs';
import path from 'node:path';
import { DaemonSet, type IDaemonSet } from 'kubernetes-models/apps/v1/DaemonSet';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Secret } from 'kubernetes-models/v1/Secret';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IHTTPGetAction } from 'kubernetes-models/v1/HTTPGetAction';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { StoreStatus } from '../../store/index.js';
import { ConfigError, envName, loadConfig, settings, type DaemonConfig, type SettingName } from '../../daemon/config.js';
import { parseRunFlags } from '../../cli/main.js';
import { startApi, TRACER_STATUS, type ApiHarness } from './api-harness.js';
import { STORE_STATUS } from './harness.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const MANIFEST = path.join(ROOT, 'deploy/kubernetes/cnirec.yaml');
const text = fs.readFileSync(MANIFEST, 'utf8');

interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  [key: string]: unknown;
}

/** One model class per kind the manifest may hold; anything else has no schema here and fails. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/Namespace': Namespace,
  'v1/ServiceAccount': ServiceAccount,
  'v1/Secret': Secret,
  'apps/v1/DaemonSet': DaemonSet,
};

/** Parses like kubectl does (YAML 1.1: a leading 0 is octal), failing on any YAML error. */
function parseManifest(source: string): KubeObject[] {
  return parseAllDocuments(source, { version: '1.1' })
    .filter((doc) => doc.contents !== null)
    .map((doc) => {
      expect(doc.errors.map((e) => e.message)).toEqual([]);
      return doc.toJS() as KubeObject;
    });
}

/** The manifest with its commented "token" blocks uncommented and the API on every address: the variant the comments describe. */
function beyondLoopback(source: string): string {
  let inBlock = false;
  const lines = source.split('\n').map((line) => {
    if (/^\s*# --- token\b/.test(line)) {
      inBlock = true;
      return line;
    }
    if (/^\s*# --- end token\b/.test(line)) {
      inBlock = false;
      return line;
    }
    return inBlock ? line.replace(/# ?/, '') : line;
  });
  return lines.join('\n').replace('--listen=127.0.0.1:7070', '--listen=0.0.0.0:7070');
}

const daemonSetOf = (objects: KubeObject[]) => {
  const ds = objects.find((o) => o.kind === 'DaemonSet') as unknown as IDaemonSet | undefined;
  if (!ds?.spec?.template.spec) throw new Error('no DaemonSet with a pod template in the manifest');
  return { ds, pod: ds.spec.template.spec, container: ds.spec.template.spec.containers[0]! };
};

/** What the downward API gives the pod on a node named like this. */
const NODE = 'node-a';
const DOWNWARD: Record<string, string> = { 'spec.nodeName': NODE };

/** The container's environment as kubelet sets it: downward-API values filled in, `$(VAR)` references expanded. */
function envOf(container: IContainer): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of container.env ?? []) {
    const field = e.valueFrom?.fieldRef?.fieldPath;
    if (field !== undefined) {
      expect(DOWNWARD, `downward field ${field}`).toHaveProperty([field]);
      env[e.name] = DOWNWARD[field]!;
    } else {
      env[e.name] = (e.value ?? '').replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (ref, name: string) => env[name] ?? ref);
    }
  }
  return env;
}

/** The daemon's configuration as the container would start it: the image's `cnirec run` with these args and env. */
function configOf(container: IContainer): DaemonConfig {
  return loadConfig(parseRunFlags(container.args ?? []), envOf(container));
}

const mib = (quantity: string | number | undefined): number => {
  const m = /^(\d+)(Mi|Gi)$/.exec(String(quantity));
  if (!m) throw new Error(`memory quantity ${String(quantity)}: expected Mi or Gi`);
  return Number(m[1]) * (m[2] === 'Gi' ? 1024 : 1);
};

/** The standard variables the daemon reads (otel/config/otlp-config.ts). */
const OTEL_VARIABLES = ['OTEL_RESOURCE_ATTRIBUTES', 'OTEL_SERVICE_NAME', 'OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_PROTOCOL'];

describe('the Kubernetes manifest', () => {
  const objects = parseManifest(text);
  const { ds, pod, container } = daemonSetOf(objects);
  const config = configOf(container);

  it('holds a Namespace, a ServiceAccount and a DaemonSet, each valid against its OpenAPI schema', () => {
    expect(objects.map((o) => o.kind)).toEqual(['Namespace', 'ServiceAccount', 'DaemonSet']);
    for (const o of objects) {
      const Model = MODELS[`${o.apiVersion}/${o.kind}`];
      expect(Model, `${o.apiVersion} ${o.kind}`).toBeDefined();
      expect(() => new Model!(o as never).validate(), `${o.kind} ${o.metadata.name}`).not.toThrow();
    }
  });

  it('puts everything in its own namespace, run by its own account without an API token', () => {
    const ns = objects.find((o) => o.kind === 'Namespace')!.metadata.name;
    for (const o of objects.filter((x) => x.kind !== 'Namespace')) expect(o.metadata.namespace, o.kind).toBe(ns);
    const account = objects.find((o) => o.kind === 'ServiceAccount')!;
    expect(pod.serviceAccountName).toBe(account.metadata.name);
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(ds.spec!.selector.matchLabels).toEqual(ds.spec!.template.metadata?.labels);
  });

  it('runs privileged in the host PID and network namespaces, on every node whatever its taints', () => {
    expect(container.securityContext?.privileged).toBe(true);
    expect(pod.hostPID).toBe(true);
    expect(pod.hostNetwork).toBe(true);
    expect(pod.tolerations).toContainEqual({ operator: 'Exists' });
    expect(pod.nodeSelector).toBeUndefined();
    expect(pod.affinity).toBeUndefined();
  });

  it('starts the daemon with flags and variables `cnirec run` accepts, the API on the node’s loopback', () => {
    expect(config.listen).toMatchObject({ host: '127.0.0.1', port: 7070 });
    const known = [...(Object.keys(settings) as SettingName[]).map(envName), ...OTEL_VARIABLES];
    // Variables set only to be referenced by others ($(NODE_NAME)) are the downward API's, not the daemon's.
    const referenced = new Set((container.env ?? []).flatMap((e) => [...(e.value ?? '').matchAll(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g)].map((m) => m[1]!)));
    for (const e of container.env ?? []) {
      if (referenced.has(e.name)) continue;
      expect(known, `env ${e.name}`).toContain(e.name);
    }
  });

  it('exports to the node’s collector agent as k8s.node.name, from the downward API', () => {
    expect(config.otlp?.traces?.url).toBe('http://127.0.0.1:4318/v1/traces');
    expect(config.otlp?.logs?.url).toBe('http://127.0.0.1:4318/v1/logs');
    expect(config.otlp?.resourceAttributes).toEqual({ 'k8s.node.name': NODE });
  });

  it('declares the API port the daemon listens on', () => {
    expect(container.ports).toContainEqual(expect.objectContaining({ name: 'api', containerPort: config.listen.port, protocol: 'TCP' }));
  });

  it('mounts the host paths the tracer and the cache watcher use, read-only where it only reads, and the database on the host', () => {
    const volumes = new Map((pod.volumes ?? []).map((v) => [v.name, v]));
    const mounts = new Map((container.volumeMounts ?? []).map((m) => [m.mountPath, m]));
    const expected: Array<[string, boolean]> = [
      ['/sys/kernel/tracing', false], // the daemon mounts tracefs here when the node has not
      ['/sys/kernel/btf', true],
      ['/var/lib/cni', true],
      ['/opt/cni/bin', true],
      [path.dirname(config.db), false],
      // The dirs of the runtimes' CRI sockets, each asked read-only.
      ['/run/containerd', true],
      ['/run/k3s/containerd', true],
      ['/run/crio', true],
    ];
    for (const [mountPath, readOnly] of expected) {
      const mount = mounts.get(mountPath);
      expect(mount, mountPath).toBeDefined();
      expect(mount!.readOnly ?? false, `${mountPath} readOnly`).toBe(readOnly);
      // Same path on the host and in the container, so recorded paths and replay scripts hold on the node.
      expect(volumes.get(mount!.name)?.hostPath?.path, mountPath).toBe(mountPath);
    }
    for (const dir of [...config.cniCacheDirs, ...config.hostLocalDirs]) expect(dir.startsWith('/var/lib/cni/'), dir).toBe(true);
    // Every socket the daemon looks for is under a mounted dir (/var/run is /run).
    expect(config.criEndpoint.kind).toBe('auto');
    if (config.criEndpoint.kind === 'auto') for (const sock of config.criEndpoint.candidates) expect([...mounts.keys()], sock).toContain(path.dirname(sock.replace(/^\/var\/run\//, '/run/')));
    for (const m of mounts.values()) expect(volumes.has(m.name), `volume ${m.name}`).toBe(true);
  });

  it('asks for the memory the benchmarks measured, and limits it with room for a capture-mode switch', () => {
    const bench = JSON.parse(fs.readFileSync(path.join(ROOT, 'bench/results/api-latency.json'), 'utf8')) as {
      memory: Record<'afterStartup' | 'afterQueries' | 'tracerAfterQueries', { vmRssMiB: number; vmHwmMiB: number }>;
    };
    const { afterStartup, afterQueries, tracerAfterQueries } = bench.memory;
    const { requests, limits } = container.resources ?? {};
    expect(mib(requests?.memory)).toBeGreaterThanOrEqual(afterStartup.vmRssMiB + tracerAfterQueries.vmRssMiB);
    // Peak daemon (1M-call database under queries) + two bpftrace processes while the mode switches +
    // the calls the store listener holds for retry while the disk is full (its default byte bound).
    const pendingMiB = 256;
    expect(mib(limits?.memory)).toBeGreaterThanOrEqual(afterQueries.vmHwmMiB + 2 * tracerAfterQueries.vmHwmMiB + pendingMiB);
    expect(requests?.cpu).toBeDefined();
  });

  it('uses the image version package.json names', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(container.image).toMatch(new RegExp(`^(.+/)?cnirec:${pkg.version.replace(/\./g, '\\.')}$`));
  });

  describe('probes against the real /healthz', () => {
    const WRITABLE: StoreStatus = STORE_STATUS;
    const DISK_FULL: StoreStatus = { ...STORE_STATUS, writable: false, lastError: 'disk full', failingSince: '2026-01-01T00:00:00.000Z' };
    let h: ApiHarness;
    beforeAll(async () => {
      h = await startApi({ token: 'a-token' }); // probes carry none: /healthz must stay open
    });
    afterAll(() => h.close());

    const probeTarget = (name: 'livenessProbe' | 'readinessProbe' | 'startupProbe'): IHTTPGetAction => {
      const get = container[name]?.httpGet;
      if (!get) throw new Error(`${name} is not an httpGet probe`);
      return get;
    };
    const status = async (get: IHTTPGetAction) => (await h.app.inject({ method: 'GET', url: get.path ?? '/' })).statusCode;

    it('aims every probe at the daemon’s listen address (kubelet shares the node’s network namespace)', () => {
      for (const name of ['livenessProbe', 'readinessProbe', 'startupProbe'] as const) {
        const get = probeTarget(name);
        expect(get.host, name).toBe(config.listen.host);
        const port = typeof get.port === 'string' ? container.ports?.find((p) => p.name === get.port)?.containerPort : get.port;
        expect(port, name).toBe(config.listen.port);
        expect(get.path, name).toMatch(/^\/healthz(\?|$)/);
      }
    });

    it('fails readiness only while the tracer is not recording, liveness never while the daemon answers', async () => {
      const live = probeTarget('livenessProbe');
      const ready = probeTarget('readinessProbe');
      h.tracer = TRACER_STATUS;
      h.storeStatus = DISK_FULL; // degraded, still serving
      expect([await status(live), await status(ready)]).toEqual([200, 200]);
      h.storeStatus = WRITABLE;
      h.tracer = { ...TRACER_STATUS, running: false, ready: false, pid: null };
      expect([await status(live), await status(ready), await status(probeTarget('startupProbe'))]).toEqual([200, 503, 200]);
      h.tracer = { ...TRACER_STATUS, ready: false };
      expect(await status(ready)).toBe(503);
    });
  });

  describe('the commented token variant (API beyond loopback)', () => {
    const variant = parseManifest(beyondLoopback(text));
    const { pod: vPod, container: vContainer } = daemonSetOf(variant);

    it('adds a valid Secret, mounted where CNIREC_TOKEN_FILE points', () => {
      expect(variant.map((o) => o.kind)).toEqual(['Namespace', 'ServiceAccount', 'Secret', 'DaemonSet']);
      for (const o of variant) expect(() => new MODELS[`${o.apiVersion}/${o.kind}`]!(o as never).validate(), o.kind).not.toThrow();
      const secret = variant.find((o) => o.kind === 'Secret')!;
      const volume = vPod.volumes?.find((v) => v.secret?.secretName === secret.metadata.name);
      expect(volume?.secret?.defaultMode).toBe(0o400);
      const mount = vContainer.volumeMounts?.find((m) => m.name === volume?.name);
      const vConfig = configOf(vContainer);
      expect(vConfig.listen.host).toBe('0.0.0.0');
      expect(path.dirname(vConfig.tokenFile)).toBe(mount?.mountPath);
      expect(path.basename(vConfig.tokenFile)).toBe(Object.keys(secret.stringData as Record<string, string>)[0]);
    });

    it('is refused by the daemon without the token', () => {
      const withoutToken = { ...vContainer, env: vContainer.env?.filter((e) => e.name !== 'CNIREC_TOKEN_FILE') };
      expect(() => configOf(withoutToken)).toThrow(ConfigError);
      expect(() => configOf(withoutToken)).toThrow(/requires an API token/);
    });
  });
});

describe('the OpenTelemetry Collector agent example', () => {
  const objects = parseManifest(fs.readFileSync(path.join(ROOT, 'deploy/kubernetes/otel-collector.yaml'), 'utf8'));
  const cnirec = configOf(daemonSetOf(parseManifest(text)).container);

  it('holds a ConfigMap and a DaemonSet, each valid against its OpenAPI schema, in cnirec’s namespace', () => {
    expect(objects.map((o) => o.kind)).toEqual(['ConfigMap', 'DaemonSet']);
    const models = { ...MODELS, 'v1/ConfigMap': ConfigMap };
    for (const o of objects) {
      expect(() => new models[`${o.apiVersion}/${o.kind}` as keyof typeof models]!(o as never).validate(), o.kind).not.toThrow();
      expect(o.metadata.namespace).toBe('cnirec');
    }
  });

  it('receives OTLP/HTTP where cnirec sends it, on the host network of every node, with a pipeline per signal cnirec sends', () => {
    const { pod, container } = daemonSetOf(objects);
    expect(pod.hostNetwork).toBe(true);
    expect(pod.tolerations).toContainEqual({ operator: 'Exists' });
    const configMap = objects.find((o) => o.kind === 'ConfigMap') as unknown as { metadata: { name: string }; data: Record<string, string> };
    const mount = container.volumeMounts!.find((m) => pod.volumes!.find((v) => v.name === m.name)?.configMap?.name === configMap.metadata.name)!;
    const file = container.args!.find((a) => a.startsWith('--config='))!.slice('--config='.length);
    expect(path.dirname(file)).toBe(mount.mountPath);
    const collector = parseAllDocuments(configMap.data[path.basename(file)]!)[0]!.toJS() as {
      receivers: { otlp: { protocols: { http: { endpoint: string } } } };
      service: { pipelines: Record<string, { receivers: string[]; exporters: string[] }> };
      exporters: Record<string, unknown>;
    };
    const target = new URL(cnirec.otlp!.traces!.url);
    expect(collector.receivers.otlp.protocols.http.endpoint).toBe(target.host);
    for (const signal of ['traces', 'logs']) {
      const pipeline = collector.service.pipelines[signal]!;
      expect(pipeline.receivers, signal).toContain('otlp');
      for (const exporter of pipeline.exporters) expect(collector.exporters, exporter).toHaveProperty([exporter]);
    }
  });
});

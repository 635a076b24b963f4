/**
 * The daemon's configuration: one zod schema, read once at startup from
 * flags and CNIREC_* environment variables (flags win), handed down as a
 * typed object. Every setting has both a flag and a variable; the README's
 * configuration reference is generated from this table (`cnirec config-doc`).
 */

import { availableParallelism } from 'node:os';
import { accessSync, constants, readFileSync } from 'node:fs';
import { z } from 'zod';
import { parseDuration, parseSize, type Parsed } from './config-units.js';
import {
  compileKeyPatterns,
  compilePointers,
  DEFAULT_REDACT_KEYS,
  DEFAULT_REDACT_KEYS_EXCEPT,
  RedactionRuleError,
  splitPatternList,
  CAPTURE_SETTINGS,
  parseCriEndpoint,
} from '../collector/index.js';
import { CAPPED_PAYLOAD_BYTES, OtlpConfigError, PAYLOAD_MODES, resolveOtlpConfig, type OtlpExportConfig } from '../otel/index.js';

const listenAddress = z
  .string()
  .regex(/^(\[[0-9a-fA-F:]+\]|[^:\s]+):(\d{1,5})$/, 'must be HOST:PORT, e.g. 127.0.0.1:7070')
  .transform((s) => {
    const sep = s.lastIndexOf(':');
    return { host: s.slice(0, sep).replace(/^\[|\]$/g, ''), port: Number(s.slice(sep + 1)), text: s };
  })
  .refine((l) => l.port >= 0 && l.port < 65536, 'port must be 0-65535 (0: any free port)');

const booleanText = z.union([z.boolean(), z.enum(['true', 'false', '1', '0', 'yes', 'no'])]).transform((v) => v === true || v === 'true' || v === '1' || v === 'yes');

const positiveInt = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** Comma-separated absolute directories; empty turns the feature off. */
const dirList = z
  .string()
  .transform((s) =>
    s
      .split(',')
      .map((d) => d.trim().replace(/(.)\/+$/, '$1'))
      .filter((d) => d.length > 0),
  )
  .refine((dirs) => dirs.every((d) => d.startsWith('/')), 'must be absolute directories, separated by commas');

/** A duration or size text → milliseconds or bytes, with the parser's message as the issue. */
const parsedText = (parse: (text: string) => Parsed) =>
  z.string().transform((text, ctx) => {
    const r = parse(text);
    if (r.ok) return r.value;
    ctx.addIssue({ code: 'custom', message: r.message });
    return z.NEVER;
  });

/** Below this the schema and the WAL alone would not fit: retention would delete everything and still be over. */
const MIN_RETENTION_DB_BYTES = 4 * 1024 * 1024;

/** Compiles a list setting with the redaction rules' own checks, so a bad pattern is a ConfigError naming it. */
const compiledList = <T>(split: (s: string) => string[], compile: (items: string[]) => T[]) =>
  z.string().transform((text, ctx) => {
    try {
      return compile(split(text));
    } catch (err) {
      if (!(err instanceof RedactionRuleError)) throw err;
      ctx.addIssue({ code: 'custom', message: err.message });
      return z.NEVER;
    }
  });

const commaList = (s: string) =>
  s
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0);

export const settings = {
  db: {
    schema: z.string().min(1),
    default: defaultDatabasePath,
    help: 'SQLite database file (created 0600 in a 0700 directory).',
  },
  listen: {
    schema: listenAddress,
    default: () => '127.0.0.1:7070',
    help: 'HOST:PORT for the HTTP API and /healthz. Other than loopback requires --token.',
  },
  capture: {
    schema: z.enum(CAPTURE_SETTINGS),
    default: () => 'auto',
    help: 'auto: light until a call fails, is killed, never finishes or runs longer than --capture-slow, or a DEL/ADD loop opens; then full for --capture-quiet after the last such trigger (the retry is recorded with its bytes). full: exec, env, exit, timing, helpers and stdin/stdout/stderr bytes (every syscall of the node pays for the payload probe). light: the same without payloads, and no syscall tracepoints. Switched at run time with `cnirec capture`.',
  },
  captureQuiet: {
    schema: parsedText(parseDuration).refine((ms) => ms >= 1000, 'must be at least 1s'),
    default: () => '10m',
    help: 'auto: how long payloads stay on after the last trigger (a failing, killed, unfinished or slow call; an open DEL/ADD loop).',
  },
  captureSlow: {
    schema: parsedText(parseDuration).refine((ms) => ms >= 1, 'must be more than 0'),
    default: () => '3s',
    help: 'auto: a call that runs longer than this turns payloads on.',
  },
  bpftrace: {
    schema: z.string().min(1),
    default: () => 'bpftrace',
    help: 'bpftrace binary (0.17 or newer).',
  },
  perfBufferPages: {
    schema: positiveInt(8, 65536).refine((n) => (n & (n - 1)) === 0, 'must be a power of two'),
    default: () => String(defaultPerfBufferPages(availableParallelism())),
    help: 'Per-CPU perf buffer pages for the main bpftrace (4 KiB each): room for bursts before records are lost. Default: 32 MiB in all, 1024 to 4096 pages a CPU (the standby tracer takes at most 1024).',
  },
  finalizeGraceMs: {
    schema: positiveInt(0, 60_000),
    default: () => '0',
    help: 'Extra wait after a plugin exits before its call is final, on top of what is known to be outstanding (records its exit announced, descendants).',
  },
  maxStreamBytes: {
    schema: positiveInt(1024, 1 << 30),
    default: () => String(4 * 1024 * 1024),
    help: 'Bytes kept per call stream (stdin, stdout, stderr); beyond that the stream is marked truncated.',
  },
  mountTracefs: {
    schema: booleanText,
    default: () => 'true',
    help: 'Mount tracefs at /sys/kernel/tracing when it is missing.',
  },
  cniCacheDirs: {
    schema: dirList,
    default: () => '/var/lib/cni/results,/var/lib/cni/multus/results',
    help: "libcni result cache directories to follow (comma-separated; empty: none). Missing ones are picked up when they appear.",
  },
  hostLocalDirs: {
    schema: dirList,
    default: () => '/var/lib/cni/networks',
    help: 'host-local IPAM data directories (`<dir>/<network>/<ip>` files) to follow for IP history and leaks (comma-separated; empty: none).',
  },
  cniConfDir: {
    schema: dirList,
    default: () => '',
    repeatable: true,
    help: "CNI conf dir to follow for config history and check with `cnirec doctor` (repeatable, or comma-separated). Empty: the conf dirs the runtimes' own configs name (containerd's config.toml, CRI-O's crio.conf and crio.conf.d, podman's containers.conf), else /etc/cni/net.d.",
  },
  cniBinDir: {
    schema: dirList,
    default: () => '',
    repeatable: true,
    help: "CNI plugin dir the checks look up plugin types in (repeatable, or comma-separated). Empty: the bin dirs of the runtime reading the conf dir, else /opt/cni/bin.",
  },
  cacheRescanMs: {
    schema: positiveInt(200, 3_600_000),
    default: () => '5000',
    help: 'Full rescan of the cache and host-local directories, the safety net for changes file notifications miss.',
  },
  criEndpoint: {
    schema: z.string().transform((text, ctx) => {
      const r = parseCriEndpoint(text);
      if (r.ok) return r.setting;
      ctx.addIssue({ code: 'custom', message: r.message });
      return z.NEVER;
    }),
    default: () => '',
    defaultText: 'the first of `/run/containerd/containerd.sock`, `/run/k3s/containerd/containerd.sock`, `/var/run/crio/crio.sock` that answers',
    help: "The container runtime's CRI socket (a path or a `unix://` URL, as crictl takes it), asked read-only for its readiness (Status), its pod sandboxes (ListPodSandbox, PodSandboxStatus) and so which attachments are leaked. `none`: the runtime is not asked.",
  },
  criPollInterval: {
    schema: parsedText(parseDuration).refine((ms) => ms >= 1000 && ms <= 600_000, 'must be between 1s and 10m'),
    default: () => '5s',
    help: 'How often the runtime is asked (the kubelet asks Status every 5 s). A leak is confirmed by two lists 2 intervals apart, never before the runtime has answered for 3 intervals, and only for attachments older than 12.',
  },
  retentionMaxAge: {
    schema: parsedText(parseDuration),
    default: () => '7d',
    help: 'Delete calls, tracer events and closed cache/IP history older than this (e.g. 7d, 12h, 30m; 0: keep forever). Calls in flight are kept.',
  },
  retentionMaxDbSize: {
    schema: parsedText(parseSize).refine((n) => n === 0 || n >= MIN_RETENTION_DB_BYTES, 'must be 0 (off) or at least 4MiB'),
    default: () => '1GiB',
    help: 'Keep the database (its pages in use plus the WAL) under this size by deleting the oldest calls first (e.g. 1GiB, 512MiB; 0: no limit). Deleting early is logged and recorded as a tracer event.',
  },
  redactKeys: {
    schema: compiledList(splitPatternList, compileKeyPatterns),
    default: () => DEFAULT_REDACT_KEYS.join(','),
    help: 'Values under JSON keys matching any of these regular expressions (case-insensitive, comma-separated) are replaced by "[redacted]" in stdin/stdout/stderr JSON, libcni cache entries and command-line flags, headers and name=value arguments before anything is stored. Setting it replaces the default list; empty turns key matching off.',
  },
  redactKeysExcept: {
    schema: compiledList(splitPatternList, compileKeyPatterns),
    default: () => DEFAULT_REDACT_KEYS_EXCEPT.join(','),
    help: 'Keys matching any of these regular expressions are kept although they match --redact-keys (by default file, path and directory names such as `etcd_key_file`).',
  },
  redactPointers: {
    schema: compiledList(commaList, compilePointers),
    default: () => '',
    help: 'JSON pointers (RFC 6901, comma-separated; `*` matches any one key or index, e.g. `/plugins/*/auth`) of values to redact as well, whatever their key.',
  },
  token: {
    schema: z.string(),
    default: () => '',
    help: 'Bearer token the API requires (all routes but /healthz). Required when listening beyond loopback.',
  },
  tokenFile: {
    schema: z.string(),
    default: () => '',
    help: 'File holding the bearer token (e.g. a mounted Kubernetes secret); trailing whitespace is ignored.',
  },
  otlpEndpoint: {
    schema: z.string(),
    default: () => '',
    help: 'OpenTelemetry Collector (OTLP/HTTP) to send calls to as spans and log records, e.g. `http://otel-collector:4318` (`/v1/traces` and `/v1/logs` are appended); empty: the standard `OTEL_EXPORTER_OTLP_ENDPOINT`, else no export. The other `OTEL_*` variables (signal endpoints, headers, protocol, timeout, service name, resource attributes) are honoured as by any OpenTelemetry SDK.',
  },
  otlpPayloads: {
    schema: z.enum(PAYLOAD_MODES),
    default: () => 'capped',
    help: `What OpenTelemetry export sends of stdin, stdout and stderr (already redacted): \`capped\` (the first ${CAPPED_PAYLOAD_BYTES / 1024} KiB of each, cuts marked), \`full\`, or \`none\`.`,
  },
  logLevel: {
    schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    default: () => 'info',
    help: 'pino log level (JSON logs on stdout).',
  },
} as const;

export type SettingName = keyof typeof settings;

/** Settings given once per value on the command line (`--cni-conf-dir A --cni-conf-dir B`); their values are joined with commas. */
export function isRepeatable(name: SettingName): boolean {
  return 'repeatable' in settings[name];
}

const configSchema = z.object(
  Object.fromEntries(Object.entries(settings).map(([k, s]) => [k, s.schema])) as { [K in SettingName]: (typeof settings)[K]['schema'] },
);

export type DaemonConfig = z.output<typeof configSchema> & {
  /** Where and how to export over OTLP (from otlpEndpoint, otlpPayloads and OTEL_*); null: no export. */
  readonly otlp: OtlpExportConfig | null;
};

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * Per-CPU perf buffer pages for the main tracer: 32 MiB in all (a busy
 * 2-CPU node exec'ing in loops lost thousands of records with 4 MiB a CPU,
 * none with 16: bench/results/busy-node.md), at least 1024 and at most 4096
 * pages a CPU. A power of two, as bpftrace wants.
 */
export function defaultPerfBufferPages(cpus: number): number {
  const pages = (32 * 1024 * 1024) / 4096 / Math.max(1, cpus);
  return Math.min(4096, Math.max(1024, 2 ** Math.floor(Math.log2(pages))));
}

/** `perfBufferPages` → `--perf-buffer-pages` and `CNIREC_PERF_BUFFER_PAGES`. */
export function flagName(name: SettingName): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

export function envName(name: SettingName): string {
  return `CNIREC_${flagName(name).replace(/-/g, '_').toUpperCase()}`;
}

/** Builds the config from flag values (already split by the CLI) and the environment. */
export function loadConfig(flags: Partial<Record<SettingName, string | boolean>>, env: NodeJS.ProcessEnv): DaemonConfig {
  const raw: Record<string, unknown> = {};
  for (const name of Object.keys(settings) as SettingName[]) {
    raw[name] = flags[name] ?? env[envName(name)] ?? settings[name].default();
  }
  const parsed = configSchema.superRefine(requireTokenBeyondLoopback).safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => {
      const name = String(i.path[0]) as SettingName;
      return `--${flagName(name)} (${envName(name)}): ${i.message}`;
    });
    throw new ConfigError(`invalid configuration: ${issues.join('; ')}`);
  }
  try {
    return { ...parsed.data, otlp: resolveOtlpConfig({ endpoint: parsed.data.otlpEndpoint, payloads: parsed.data.otlpPayloads }, env) };
  } catch (err) {
    if (err instanceof OtlpConfigError) throw new ConfigError(`invalid configuration: ${err.message}`);
    throw err;
  }
}

/** The token in force: --token, else the content of --token-file; null when neither is set. */
export function resolveToken(config: Pick<DaemonConfig, 'token' | 'tokenFile'>): string | null {
  if (config.token) return config.token;
  if (!config.tokenFile) return null;
  try {
    const token = readFileSync(config.tokenFile, 'utf8').trim();
    if (!token) throw new ConfigError(`--token-file ${config.tokenFile} is empty`);
    return token;
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`cannot read --token-file ${config.tokenFile}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}`);
  }
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

function requireTokenBeyondLoopback(cfg: { listen: { host: string }; token: string; tokenFile: string }, ctx: z.RefinementCtx): void {
  if (LOOPBACK.test(cfg.listen.host) || cfg.token || cfg.tokenFile) return;
  ctx.addIssue({
    code: 'custom',
    path: ['listen'],
    message: `listening on ${cfg.listen.host} (beyond loopback) requires an API token: set --token or --token-file`,
  });
}

/** A HOST:PORT as --listen takes it (for `cnirec open`), and whether it is loopback (else a token is required); null when malformed. */
export function parseListen(text: string): { host: string; port: number; loopback: boolean } | null {
  const r = listenAddress.safeParse(text);
  return r.success ? { host: r.data.host, port: r.data.port, loopback: LOOPBACK.test(r.data.host) } : null;
}

/** Markdown table of every setting, for the README. */
export function configReference(): string {
  const rows = (Object.keys(settings) as SettingName[]).map((name) => {
    const value = settings[name].default();
    const setting = settings[name];
    const def =
      'defaultText' in setting
        ? setting.defaultText
        : name === 'db'
        ? '`/var/lib/cnirec/cnirec.db` as root, else `./cnirec.db`'
        : name === 'perfBufferPages'
          ? '32 MiB over the CPUs (`4096` on 2 CPUs, `1024` from 8 on)'
          : value === ''
            ? 'none'
            : `\`${value}\``;
    return `| \`--${flagName(name)}\` | \`${envName(name)}\` | ${def} | ${settings[name].help} |`;
  });
  return ['| flag | environment | default | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

function defaultDatabasePath(): string {
  try {
    accessSync('/var/lib', constants.W_OK);
    return '/var/lib/cnirec/cnirec.db';
  } catch {
    return './cnirec.db';
  }
}

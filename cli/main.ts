/**
 * Process entry: parses the command line, sets up logging and runs a
 * command. Exit codes: 0 done, 1 a failure (no daemon, a refusal or "not
 * found" from it), 2 a usage error in the command line (or, for `run`, a
 * configuration or host problem a restart will not fix). Every error ends in
 * one message on stderr, never a stack trace; a reader that goes away
 * (`| head`) ends the command quietly.
 */

import { readFileSync } from 'node:fs';
import { buildInfo, ConfigError, configReference, createDaemonLogger, flagName, isRepeatable, loadConfig, settings, type SettingName, runDaemon } from '../daemon/index.js';
import { DEFAULT_API, DEFAULT_TIMEOUT_MS, type ClientOptions } from './api-client.js';
import { bundleCommand } from './bundle-command.js';
import { cacheCommand } from './cache-command.js';
import { captureCommand } from './capture-command.js';
import { callsCommand } from './calls-command.js';
import { configCommand } from './config-command.js';
import { runDemo } from './demo.js';
import { doctorCommand } from './doctor-command.js';
import { ClientError, HelpRequested, UsageError } from './errors.js';
import { findingsCommand } from './findings-command.js';
import { gcCommand } from './gc-command.js';
import { parseCommand } from './flags.js';
import { ipCommand } from './ip-command.js';
import { openCommand } from './open-command.js';
import { endQuietlyOnClosedPipe, stderr, stdout } from './output.js';
import { podCommand } from './pod-command.js';
import { replayCommand, showCommand } from './show-command.js';
import { tailCommand } from './tail-command.js';
import { readTimeout } from './timeout-flag.js';

const USAGE = `usage: cnirec <command> [flags]

commands:
  run          record every CNI plugin call on this node (needs root)
  demo         run real reference plugins in a throwaway network namespace
               and show what the running daemon recorded
  calls        list recorded calls, newest first
                 [--pod NS/NAME] [--container ID] [--command C] [--plugin P] [--failed]
                 [--slow MS] [--running] [--since T] [--until T] [--limit N | --all] [-o wide|json]
  show ID      one call in full: its error, env, stdin, stdout, stderr, kernel changes, children, helpers
                 [-o json] [--raw stdin|stdout|stderr]
  pod NS/NAME  a pod's story: its sandboxes, findings, cache entries and calls as trees
                 [--uid UID] [--since T] [--until T] [-o json]
  tail         follow calls live  [--pod NS/NAME] [--command C] [--plugin P] [--failed] [--since T] [--json]
  findings     what went wrong on this node, worst first: DEL/ADD loops, broken or stale
               cache files, leaked IPs   [--kind K] [--severity S] [--pod NS/NAME] [--resolved]
                 [--limit N | --all] [-o wide|json]
  ip ADDRESS   who held an IP address, and when   [-o wide|json]
  cache        libcni's cached results   [--pod NS/NAME] [--container ID] [--network N] [--removed]
  capture [auto|full|light]   what the tracer captures now, why and until when; or set it
               [--for DURATION] [--pod NS/NAME | --namespace NS]   (full for one pod: its payloads only)
  replay ID    print a shell script that re-runs the call by hand
  bundle       the node's CNI story in one .tar.gz to hand over: the record of the last 6 hours
               (or of pods, calls), the node's CNI setup, the container runtime's side, the daemon's
               health, settings and log
                 [--since T] [--until T] [--pod NS/NAME]... [--pod-uid UID] [--call ID]...
                 [-o FILE|-] [--max-size SIZE] [--no-payloads] [--db FILE] [--cri-endpoint PATH|none]
                 (works with the daemon down: the runtime is then asked directly)
  open FILE    serve a bundle read-only anywhere (no root, bpftrace or CNI): web view, API, and the
               commands above with --api   [--listen HOST:PORT] [--token-file FILE]
  doctor       check the node's CNI setup: the conf dirs and bin dirs the
               runtimes read, the active network and why, JSON errors,
               cniVersion, missing or broken plugins, the runtime's NetworkReady (CRI);
               exit 1 on a problem. Works without a daemon
                 [--cni-conf-dir D]... [--cni-bin-dir D]... [--cri-endpoint PATH] [--json] [--no-daemon]
  gc           what a CNI GC would free: attachments whose sandbox the container runtime
               no longer lists (asked over the CRI); a dry run unless --apply, which runs
               their DELs one at a time. Run on the node, as root; no daemon needed
                 [--apply] [--cri-endpoint PATH] [--cni-bin-dir D]... [--min-age DURATION] [--json]
  config history [FILE]   the recorded versions of the conf dir files
  config show ID          one version as stored (after redaction)
  config diff ID|FILE [ID]  a unified diff: a version against the one before
                          it, or two versions
  mcp          an MCP server on stdio for AI agents: the record as tools (find_calls, get_call,
               pod_story, list_findings, node_cni, ip_history, tracer_status), read-only
                 [--allow-capture-changes]  (also set_capture)
  config-doc   print the configuration reference (Markdown)
  version      print cnirec's version
  help         this text

Every command but run talks to a running daemon (doctor asks it when it answers): --api URL (CNIREC_API, default ${DEFAULT_API}),
--token T (CNIREC_TOKEN) or --token-file FILE (CNIREC_TOKEN_FILE), --timeout DURATION per request (CNIREC_TIMEOUT, default 30s).

Times: ISO 8601 (2025-11-21T18:30:00Z; without an offset it is UTC), a duration before now (10m, 1h30m,
2d) or epoch milliseconds. Times printed are UTC; lists show ages, -o wide the times themselves.

run flags (each also as a CNIREC_* environment variable):
${(Object.keys(settings) as SettingName[]).map((n) => `  --${flagName(n).padEnd(20)} ${settings[n].help}`).join('\n')}
`;

type Command = (args: string[], client: ClientOptions) => Promise<number>;

const CLIENT_COMMANDS: Readonly<Record<string, Command>> = {
  calls: callsCommand,
  show: showCommand,
  pod: podCommand,
  tail: tailCommand,
  findings: findingsCommand,
  ip: ipCommand,
  cache: cacheCommand,
  capture: captureCommand,
  replay: replayCommand,
  bundle: bundleCommand,
  doctor: doctorCommand,
  gc: gcCommand,
  config: configCommand,
  // Loaded when asked for: the MCP SDK is not worth every other command's start-up time.
  mcp: async (args, client) => (await import('./mcp/command.js')).mcpCommand(args, client),
  demo: (args, client) => {
    parseCommand(args, {}, 'usage: cnirec demo [--api URL]');
    return runDemo(client);
  },
};

export async function main(argv: string[]): Promise<number> {
  endQuietlyOnClosedPipe();
  const [command, ...rest] = argv;
  try {
    if (command !== undefined && Object.hasOwn(CLIENT_COMMANDS, command)) {
      const { client, args } = clientOptions(rest, process.env);
      return await CLIENT_COMMANDS[command]!(args, client);
    }
    switch (command) {
      case 'run':
        return await run(rest);
      case 'open':
        return await openCommand(rest);
      case 'config-doc':
        stdout.raw(`${configReference()}\n`);
        return 0;
      case 'version':
      case '--version':
        stdout.raw(`cnirec ${buildInfo().version}\n`);
        return 0;
      case 'help':
      case '--help':
      case '-h':
        stdout.raw(USAGE);
        return 0;
      case undefined:
        stderr.raw(USAGE);
        return 2;
      default:
        throw new UsageError(`unknown command "${command}" (cnirec help lists them)`);
    }
  } catch (err) {
    return reportError(err);
  }
}

/** One message per error on stderr, and the exit code it means. Anything unexpected is a bug: its stack is worth having. */
function reportError(err: unknown): number {
  if (err instanceof HelpRequested) {
    stdout.line(err.usage);
    return 0;
  }
  if (err instanceof UsageError) {
    stderr.line(`cnirec: ${err.message}`);
    if (err.usage) stderr.line(err.usage);
    return 2;
  }
  if (err instanceof ConfigError) {
    stderr.line(`cnirec: ${err.message}`);
    return 2;
  }
  if (err instanceof ClientError || (err instanceof Error && err.name === 'DemoError') || isBundleRefusal(err)) {
    stderr.line(`cnirec: ${err.message}`);
    return 1;
  }
  // `run`: the database or the tracer cannot be used on this host; systemd does not restart on 2.
  if (isUserFacing(err)) {
    stderr.line(`cnirec: ${(err as Error).message}`);
    return 2;
  }
  throw err;
}

async function run(args: string[]): Promise<number> {
  const config = loadConfig(parseRunFlags(args), process.env);
  const { log, recentLines } = createDaemonLogger(config.logLevel);
  return runDaemon(config, log, recentLines);
}

/** `cnirec run`'s flags, as loadConfig takes them (exported so deploy/ manifests can be checked against it). */
export function parseRunFlags(args: string[]): Partial<Record<SettingName, string>> {
  const options = Object.fromEntries((Object.keys(settings) as SettingName[]).map((n) => [flagName(n), { type: 'string' as const, multiple: isRepeatable(n) }]));
  const { values } = parseCommand(args, options, 'usage: cnirec run [flags] (cnirec help lists them)');
  const flags: Partial<Record<SettingName, string>> = {};
  for (const n of Object.keys(settings) as SettingName[]) {
    const v = values[flagName(n)] as string | string[] | boolean | undefined;
    if (typeof v === 'string') flags[n] = v;
    else if (Array.isArray(v)) flags[n] = v.join(',');
  }
  return flags;
}

const GLOBAL_FLAGS = ['--api', '--token', '--token-file', '--timeout'] as const;

/** Takes --api, --token, --token-file and --timeout out of the arguments, wherever they are (the rest belong to the command). */
export function clientOptions(args: readonly string[], env: NodeJS.ProcessEnv): { client: ClientOptions; args: string[] } {
  const rest: string[] = [];
  const given: Partial<Record<(typeof GLOBAL_FLAGS)[number], string>> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      rest.push(...args.slice(i));
      break;
    }
    const eq = arg.indexOf('=');
    const flag = (eq === -1 ? arg : arg.slice(0, eq)) as (typeof GLOBAL_FLAGS)[number];
    if (!(GLOBAL_FLAGS as readonly string[]).includes(flag)) {
      rest.push(arg);
      continue;
    }
    const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
    if (value === undefined || value === '') throw new UsageError(`${flag} needs a value`);
    given[flag] = value;
  }
  const api = apiUrl(given['--api'] ?? env.CNIREC_API ?? DEFAULT_API, given['--api'] === undefined && env.CNIREC_API !== undefined ? 'CNIREC_API' : '--api');
  const timeoutMs = readTimeout(given['--timeout'] ?? env.CNIREC_TIMEOUT, given['--timeout'] === undefined ? 'CNIREC_TIMEOUT' : '--timeout') ?? DEFAULT_TIMEOUT_MS;
  return { client: { api, token: clientToken(given, env), timeoutMs }, args: rest };
}

/**
 * The token: --token, else --token-file's content, else CNIREC_TOKEN, else CNIREC_TOKEN_FILE's — the
 * file the daemon reads too (a mounted Secret), so `kubectl exec … -- cnirec …` inside its pod needs no flag.
 */
function clientToken(given: Partial<Record<(typeof GLOBAL_FLAGS)[number], string>>, env: NodeJS.ProcessEnv): string | null {
  if (given['--token'] !== undefined) return given['--token'];
  if (given['--token-file'] !== undefined) return readToken(given['--token-file'], '--token-file');
  if (env.CNIREC_TOKEN) return env.CNIREC_TOKEN;
  if (env.CNIREC_TOKEN_FILE) return readToken(env.CNIREC_TOKEN_FILE, 'CNIREC_TOKEN_FILE');
  return null;
}

function readToken(file: string, flag: string): string {
  let token: string;
  try {
    token = readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw new UsageError(`cannot read ${flag} ${file}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}`);
  }
  if (!token) throw new UsageError(`${flag} ${file} is empty`);
  return token;
}

/** The daemon's base URL; `host:port` alone means http://host:port. Anything that is no http(s) URL is a usage error. */
export function apiUrl(value: string, flag: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new UsageError(`${flag} takes the daemon's URL (http://127.0.0.1:7070), not "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`${flag} takes an http:// or https:// URL, not "${value}"`);
  return url.href.replace(/\/+$/, '');
}

/** Errors whose message is meant for the person at the terminal (typed errors of the layers below). */
function isUserFacing(err: unknown): boolean {
  return err instanceof Error && ['StoreError', 'TracerStartError'].includes(err.name);
}

/** A bundle refused (not found, too big, damaged, foreign): a failure of the request, not of the command line. */
function isBundleRefusal(err: unknown): err is Error {
  return err instanceof Error && err.name === 'BundleError';
}

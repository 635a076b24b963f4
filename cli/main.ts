/**
 * Process entry: parses the command line, sets up logging and runs a
 * command. User errors end in one line on stderr and a non-zero exit, never
 * a stack trace.
 */

import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { ConfigError, configReference, flagName, isRepeatable, loadConfig, settings, type SettingName, runDaemon } from '../daemon/index.js';
import { runDemo } from './demo.js';
import { ClientError, type ClientOptions } from './api-client.js';
import { findingsCommand } from './findings-command.js';
import { podCommand } from './pod-command.js';
import { callsCommand, replayCommand, showCommand } from './query-commands.js';
import { tailCommand } from './tail-command.js';
import { configCommand } from './config-command.js';
import { doctorCommand } from './doctor-command.js';
import { UsageError } from './usage-error.js';

const USAGE = `usage: cnirec <command> [flags]

commands:
  run          record every CNI plugin call on this node (needs root)
  demo         run real reference plugins in a throwaway network namespace
               and show what the running daemon recorded
  tail         follow calls live    [--pod NS/NAME] [--failed] [--command C]
                                    [--plugin P] [--since T] [--json]
  calls        list recorded calls  [--pod NS/NAME] [--container ID] [--command C]
                                    [--plugin P] [--failed] [--slow MS] [--running]
                                    [--since T] [--until T] [--limit N] [--all] [--json]
  show ID      one call in full: env, stdin, stdout, stderr, children, helpers
  pod NS/NAME  a pod's story: its sandboxes, each with its calls as trees
               (delegated calls and helpers nested), times and cache entries
                                    [--uid UID] [--since T] [--until T] [--json]
  replay ID    print a shell script that re-runs the call by hand
  findings     what went wrong on this node: DEL/ADD loops, broken or stale
               cache files, leaked IPs, config changes before failures, GC
               leftovers                  [--kind K] [--all] [--limit N] [--json]
  doctor       check the node's CNI setup: the conf dirs and bin dirs the
               runtimes read, the active network and why, JSON errors,
               cniVersion, missing or broken plugins; exit 1 on a problem.
               Works without a daemon    [--cni-conf-dir D]... [--cni-bin-dir D]...
                                         [--json] [--no-daemon]
  config history [FILE]   the recorded versions of the conf dir files
  config show ID          one version as stored (after redaction)
  config diff ID|FILE [ID]  a unified diff: a version against the one before
                          it, or two versions

tail, calls, show, pod, replay, findings, config and demo talk to a running daemon (doctor asks it when it answers): --api URL
(CNIREC_API, default http://127.0.0.1:7070) and --token T (CNIREC_TOKEN).
  config-doc   print the configuration reference (Markdown)
  help         this text

run flags (each also as a CNIREC_* environment variable):
${(Object.keys(settings) as SettingName[]).map((n) => `  --${flagName(n).padEnd(20)} ${settings[n].help}`).join('\n')}
`;

export { UsageError };

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'run':
        return await run(rest);
      case 'demo':
        return await runDemo(clientOptions(rest).client);
      case 'tail':
      case 'calls':
      case 'show':
      case 'pod':
      case 'replay':
      case 'findings':
      case 'doctor':
      case 'config': {
        const { client, args } = clientOptions(rest);
        const commands = {
          tail: tailCommand,
          calls: callsCommand,
          show: showCommand,
          pod: podCommand,
          replay: replayCommand,
          findings: findingsCommand,
          doctor: doctorCommand,
          config: configCommand,
        };
        return await commands[command](args, client);
      }
      case 'config-doc':
        process.stdout.write(`${configReference()}\n`);
        return 0;
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(USAGE);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (err) {
    if (err instanceof Error && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`cnirec: ${err.message}\n`);
      return 2;
    }
    if (err instanceof UsageError || err instanceof ConfigError || err instanceof ClientError || isUserFacing(err)) {
      process.stderr.write(`cnirec: ${(err as Error).message}\n`);
      if (err instanceof UsageError) process.stderr.write(USAGE);
      return 2;
    }
    throw err;
  }
}

async function run(args: string[]): Promise<number> {
  const config = loadConfig(parseRunFlags(args), process.env);
  const log = pino({ level: config.logLevel, base: { app: 'cnirec' } });
  return runDaemon(config, log);
}

/** `cnirec run`'s flags, as loadConfig takes them (exported so deploy/ manifests can be checked against it). */
export function parseRunFlags(args: string[]): Partial<Record<SettingName, string>> {
  const options = Object.fromEntries(
    (Object.keys(settings) as SettingName[]).map((n) => [flagName(n), { type: 'string' as const, multiple: isRepeatable(n) }]),
  );
  let values: Record<string, string | string[] | boolean | undefined>;
  try {
    values = parseArgs({ args, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const flags: Partial<Record<SettingName, string>> = {};
  for (const n of Object.keys(settings) as SettingName[]) {
    const v = values[flagName(n)];
    if (typeof v === 'string') flags[n] = v;
    else if (Array.isArray(v)) flags[n] = v.join(',');
  }
  return flags;
}

/** Takes --api and --token out of the arguments (the rest belong to the command). */
function clientOptions(args: string[]): { client: ClientOptions; args: string[] } {
  const rest: string[] = [];
  let api = process.env.CNIREC_API ?? 'http://127.0.0.1:7070';
  let token = process.env.CNIREC_TOKEN ?? null;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const [flag, inline] = arg.split('=', 2) as [string, string | undefined];
    if (flag === '--api' || flag === '--token') {
      const value = inline ?? args[++i];
      if (value === undefined) throw new UsageError(`${flag} needs a value`);
      if (flag === '--api') api = value.replace(/\/+$/, '');
      else token = value;
    } else {
      rest.push(arg);
    }
  }
  return { client: { api, token }, args: rest };
}

/** Errors whose message is meant for the person at the terminal (typed errors of the layers below). */
function isUserFacing(err: unknown): boolean {
  return err instanceof Error && ['StoreError', 'TracerStartError', 'DemoError'].includes(err.name);
}

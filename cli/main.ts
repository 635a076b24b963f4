/**
 * Process entry: parses the command line, sets up logging and runs a
 * command. User errors end in one line on stderr and a non-zero exit, never
 * a stack trace.
 */

import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { ConfigError, configReference, flagName, loadConfig, settings, type SettingName } from './config.js';
import { runDaemon } from './run.js';
import { runDemo } from './demo.js';

const USAGE = `usage: cnirec <command> [flags]

commands:
  run          record every CNI plugin call on this node (needs root)
  demo         run real reference plugins in a throwaway network namespace
               and show what the running daemon recorded
  config-doc   print the configuration reference (Markdown)
  help         this text

run flags (each also as a CNIREC_* environment variable):
${(Object.keys(settings) as SettingName[]).map((n) => `  --${flagName(n).padEnd(20)} ${settings[n].help}`).join('\n')}
`;

export class UsageError extends Error {}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'run':
        return await run(rest);
      case 'demo':
        return await runDemo(parseDemoFlags(rest));
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
    if (err instanceof UsageError || err instanceof ConfigError || isUserFacing(err)) {
      process.stderr.write(`cnirec: ${(err as Error).message}\n`);
      if (err instanceof UsageError) process.stderr.write(USAGE);
      return 2;
    }
    throw err;
  }
}

async function run(args: string[]): Promise<number> {
  const options = Object.fromEntries(
    (Object.keys(settings) as SettingName[]).map((n) => [flagName(n), { type: 'string' as const }]),
  );
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const flags: Partial<Record<SettingName, string>> = {};
  for (const n of Object.keys(settings) as SettingName[]) {
    const v = values[flagName(n)];
    if (typeof v === 'string') flags[n] = v;
  }
  const config = loadConfig(flags, process.env);
  const log = pino({ level: config.logLevel, base: { app: 'cnirec' } });
  return runDaemon(config, log);
}

function parseDemoFlags(args: string[]): { api: string } {
  try {
    const { values } = parseArgs({ args, options: { api: { type: 'string' } }, strict: true });
    return { api: values.api ?? process.env.CNIREC_API ?? 'http://127.0.0.1:7070' };
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** Errors whose message is meant for the person at the terminal (typed errors of the layers below). */
function isUserFacing(err: unknown): boolean {
  return err instanceof Error && ['StoreError', 'TracerStartError', 'DemoError'].includes(err.name);
}

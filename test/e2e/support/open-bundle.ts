/**
 * `cnirec open FILE --listen 127.0.0.1:0` as a person runs it (the built CLI, its own process), until
 * stopped: its URL read from what it prints.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { expect } from 'vitest';

const CLI = path.resolve(import.meta.dirname, '../../../bin/cnirec.js');

export interface OpenedBundle {
  readonly url: string;
  stop(): Promise<void>;
}

export async function openBundle(file: string, env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin' }): Promise<OpenedBundle> {
  const child: ChildProcess = spawn(process.execPath, [CLI, 'open', file, '--listen', '127.0.0.1:0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 30_000;
  for (;;) {
    const url = /web view\s+(http:\/\/[^/\s]+)/.exec(out)?.[1];
    if (url) return { url, stop: async () => void (child.kill('SIGTERM'), expect(await exited).toBe(0)) };
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`cnirec open did not serve ${file}:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

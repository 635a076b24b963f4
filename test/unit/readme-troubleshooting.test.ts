// The README's troubleshooting table quotes the daemon's own messages: each
// quote (its parts around "…") must be found, in order, in a message the
// code really produces or in the source text that writes it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, resolveToken } from '../../daemon/config.js';
import { checkPrivileges, runPreflight } from '../../collector/tracer/preflight.js';
import { toStoreError } from '../../store/db/errors.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** Messages as users see them, produced by the code with the README's example paths put back in. */
function producedMessages(): string[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cnirec-readme-'));
  try {
    const oldBpftrace = path.join(dir, 'bpftrace');
    fs.writeFileSync(oldBpftrace, '#!/bin/sh\necho "bpftrace v0.14.1"\n', { mode: 0o755 });
    const emptyToken = path.join(dir, 'token');
    fs.writeFileSync(emptyToken, '\n');
    const missing = path.join(dir, 'missing');
    const out: string[] = [];
    out.push(checkPrivileges('CapEff:\t0000000000000000\n')!.message);
    const problems = [
      ...runPreflight({ bpftracePath: `${missing}/bpftrace`, mountTracefs: false, tracefsPath: `${missing}/tracing`, btfPath: `${missing}/vmlinux`, procStatus: 'CapEff:\t000001ffffffffff\n' }),
      ...runPreflight({ bpftracePath: oldBpftrace, mountTracefs: false, tracefsPath: `${missing}/tracing`, btfPath: `${missing}/vmlinux`, procStatus: 'CapEff:\t000001ffffffffff\n' }),
    ];
    for (const p of problems) {
      out.push(p.message.replaceAll(`${missing}/bpftrace`, 'bpftrace').replaceAll(`${missing}/tracing`, '/sys/kernel/tracing').replaceAll(`${missing}/vmlinux`, '/sys/kernel/btf/vmlinux'));
    }
    const configError = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        if (err instanceof ConfigError) return err.message;
        throw err;
      }
      throw new Error('expected a ConfigError');
    };
    out.push(configError(() => loadConfig({ listen: '0.0.0.0:7070' }, {})));
    out.push(configError(() => loadConfig({ otlpEndpoint: 'http://otel-collector:4318' }, { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })));
    out.push(configError(() => resolveToken({ token: '', tokenFile: `${missing}/token` })).replace(`${missing}/token`, '/etc/cnirec/token'));
    out.push(configError(() => resolveToken({ token: '', tokenFile: emptyToken })).replace(emptyToken, '…'));
    out.push(toStoreError(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }), '…', 'write calls to').message);
    return out;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Source text of the layers that write user-facing messages (for log lines with values in them). */
function sourceTexts(): string[] {
  const texts: string[] = [];
  for (const dir of ['cli', 'daemon', 'collector', 'store', 'otel', 'api']) {
    for (const f of fs.readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })) {
      if (f.endsWith('.ts')) texts.push(fs.readFileSync(path.join(ROOT, dir, f), 'utf8'));
    }
  }
  return texts;
}

function troubleshootingQuotes(): string[] {
  const section = readme.split('## Troubleshooting')[1]!.split('\n## ')[0]!;
  const firstCells = section.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| message') && !l.startsWith('|---')).map((l) => l.split(' | ')[0]!);
  // Sentences only (three words or more): `/healthz`, `lostEvents` and the like are names, not messages.
  return firstCells.flatMap((cell) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!)).filter((q) => q.split(/\s+/).length >= 3);
}

const inOrder = (text: string, parts: string[]) => {
  let at = 0;
  for (const part of parts) {
    const found = text.indexOf(part, at);
    if (found < 0) return false;
    at = found + part.length;
  }
  return true;
};

describe('the README troubleshooting table', () => {
  const corpus = [...producedMessages(), ...sourceTexts()];
  const quotes = troubleshootingQuotes();

  it('quotes messages', () => {
    expect(quotes.length).toBeGreaterThanOrEqual(10);
  });

  for (const quote of quotes) {
    it(`quotes a real message: ${quote}`, () => {
      const parts = quote.split('…').map((p) => p.trim()).filter(Boolean);
      expect(corpus.some((text) => inOrder(text, parts))).toBe(true);
    });
  }

  it('starts with every preflight and configuration message the daemon gives', () => {
    for (const message of producedMessages()) {
      const start = message.slice(0, 40);
      expect(readme, start).toContain(start);
    }
  });
});

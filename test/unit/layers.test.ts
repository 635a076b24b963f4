/**
 * The layers are a rule, not a habit: the linter refuses an import against the data flow or past a
 * folder's index.ts (eslint.config.js), and no two modules of the shipped code import each other,
 * however indirectly.
 */

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ESLint } from 'eslint';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

async function restrictedImports(file: string, specifier: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: ROOT });
  const code = `import { probe } from '${specifier}';\nexport const used = probe;\n`;
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('the layer rule', () => {
  it.each([
    ['collector/probe.ts', '../store/index.js', 'collector/ must not import store/'],
    ['collector/cache/probe.ts', '../../api/index.js', 'collector/ must not import api/'],
    ['store/calls/probe.ts', '../../daemon/index.js', 'store/ must not import daemon/'],
    ['api/routes/probe.ts', '../../cli/main.js', 'api/ must not import cli/'],
    ['daemon/probe.ts', '../cli/main.js', 'daemon/ must not import cli/'],
    ['lib/probe.ts', '../bpf/index.js', 'lib/ must not import bpf/'],
  ])('refuses an import against the data flow: %s importing %s', async (file, specifier, said) => {
    const messages = await restrictedImports(file, specifier);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain(said);
  });

  it.each([
    ['api/routes/probe.ts', '../../store/calls/call-reader.js', 'through store/index.ts'],
    ['daemon/probe.ts', '../collector/tracer/tracer-run.js', 'through collector/index.ts'],
    ['cli/probe.ts', '../daemon/run.js', 'through daemon/index.ts'],
    ['store/calls/probe.ts', '../cache/cache-reader.js', 'through store/cache/index.ts'],
    ['collector/probe.ts', '../lib/topic.js', 'through lib/index.ts'],
    ['collector/redact/probe.ts', '../cache/cache-types.js', 'through collector/cache/index.ts'],
    ['collector/tracer/probe.ts', '../assemble/assembler.js', 'through collector/assemble/index.ts'],
  ])('refuses an import past a folder index: %s importing %s', async (file, specifier, said) => {
    const messages = await restrictedImports(file, specifier);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain(said);
  });

  it.each([
    ['api/routes/probe.ts', '../../store/index.js'],
    ['store/calls/probe.ts', '../cache/index.js'],
    ['store/calls/probe.ts', './call-reader.js'],
    ['collector/assemble/probe.ts', '../tracer/canary.js'],
    ['collector/redact/probe.ts', '../cache/index.js'],
    ['cli/probe.ts', '../daemon/index.js'],
    ['collector/cache/probe.ts', '../../lib/index.js'],
    ['test/unit/probe.test.ts', '../../store/calls/call-reader.js'],
    ['bench/probe.ts', '../collector/assemble/assembler.js'],
  ])('allows %s to import %s', async (file, specifier) => {
    expect(await restrictedImports(file, specifier)).toEqual([]);
  });
});

describe('the web view (ui/) runs in a browser', () => {
  async function uiRestrictions(file: string, code: string): Promise<string[]> {
    const eslint = new ESLint({ cwd: ROOT });
    const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
    return result!.messages.filter((m) => m.ruleId === '@typescript-eslint/no-restricted-imports').map((m) => m.message);
  }

  it.each([
    ['ui/pages/probe.tsx', `import { buildApp } from '../../api/index.js';\nexport const used = buildApp;\n`],
    ['ui/pages/probe.tsx', `import type { CallStore } from '../../store/index.js';\nexport type Used = CallStore;\n`],
    ['ui/model/probe.ts', `import { readFileSync } from 'node:fs';\nexport const used = readFileSync;\n`],
  ])('refuses server code in %s: %s', async (file, code) => {
    expect(await uiRestrictions(file, code)).toHaveLength(1);
  });

  it.each([
    ['ui/client/probe.ts', `import type { CallSummary } from '../../api/index.js';\nexport type Used = CallSummary;\n`],
    ['ui/pages/probe.tsx', `import { getJson } from '../client/client.js';\nexport const used = getJson;\n`],
  ])('allows %s: %s', async (file, code) => {
    expect(await uiRestrictions(file, code)).toEqual([]);
  });
});

describe('the import graph of the shipped code', () => {
  it('has no cycle', () => {
    const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.ts'], { cwd: ROOT, encoding: 'utf8' })
      .split('\n')
      .filter((f) => f !== '' && !f.startsWith('test/') && !f.startsWith('bench/') && !f.startsWith('ui/') && !f.endsWith('.d.ts') && f !== 'vitest.config.ts');
    const known = new Set(files);
    const edges = new Map<string, string[]>();
    for (const file of files) {
      const imported = ts.preProcessFile(readFileSync(path.join(ROOT, file), 'utf8'), true, true).importedFiles;
      edges.set(
        file,
        imported
          .map((i) => i.fileName)
          .filter((spec) => spec.startsWith('.'))
          .map((spec) => path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)).replace(/\.js$/, '.ts'))
          .filter((target) => known.has(target)),
      );
    }
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, trail: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        cycles.push([...trail.slice(trail.indexOf(file)), file].join(' → '));
        return;
      }
      state.set(file, 'open');
      for (const next of edges.get(file) ?? []) visit(next, [...trail, file]);
      state.set(file, 'done');
    };
    for (const file of files) visit(file, []);
    expect(cycles).toEqual([]);
  });
});

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configReference } from '../../daemon/config.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };

describe('the README', () => {
  it('carries the configuration reference generated from the config schema', () => {
    const section = readme.split('<!-- config-reference:start -->')[1]?.split('<!-- config-reference:end -->')[0]?.trim();
    expect(section, 'run: npm run build && node scripts/update-readme.mjs').toBe(configReference());
  });

  it('names only npm scripts that package.json has', () => {
    const named = [...readme.matchAll(/npm run ([a-z:-]+)/g)].map((m) => m[1]!);
    for (const script of named) expect(pkg.scripts, `npm run ${script}`).toHaveProperty(script);
  });

  it('gives the test command that CI runs, and that command runs the whole suite', () => {
    const ci = readFileSync(path.join(ROOT, '.ci/run'), 'utf8');
    const quickStart = readme.split('## Quick start')[1]!.split('\n## ')[0]!;
    expect(quickStart).toMatch(/^bash scripts\/test\.sh\b/m);
    expect(ci).toMatch(/^bash scripts\/test\.sh$/m);
    expect(readFileSync(path.join(ROOT, 'scripts/test.sh'), 'utf8')).toMatch(/^\s*npm test$/m);
  });

  it('keeps what the daemon needs apart from what only the tests need', () => {
    const setup = readFileSync(path.join(ROOT, 'scripts/setup.sh'), 'utf8');
    for (const testOnly of ['podman', 'chromium', 'runc', 'containerd']) expect(setup).not.toMatch(new RegExp(`apt_install .*\\b${testOnly}\\b`));
  });
});

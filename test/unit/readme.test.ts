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

  it('gives the test command that CI runs', () => {
    const ci = readFileSync(path.join(ROOT, '.ci/run'), 'utf8');
    expect(readme).toContain('npm test');
    expect(ci).toMatch(/^npm test$/m);
  });
});

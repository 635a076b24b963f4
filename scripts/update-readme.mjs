// Regenerates the configuration reference in README.md from the zod config schema
// (the README test fails when they drift). Run: npm run build && node scripts/update-readme.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { configReference } from '../dist/daemon/config.js';

const file = new URL('../README.md', import.meta.url);
const readme = readFileSync(file, 'utf8');
const start = '<!-- config-reference:start -->';
const end = '<!-- config-reference:end -->';
const before = readme.slice(0, readme.indexOf(start) + start.length);
const after = readme.slice(readme.indexOf(end));
writeFileSync(file, `${before}\n${configReference()}\n${after}`);

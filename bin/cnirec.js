#!/usr/bin/env node
// The CLI is compiled to dist/ by `npm run build` (run by `npm ci` through `prepare`).
import { main } from '../dist/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    console.error(`cnirec: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  },
);

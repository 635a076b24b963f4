#!/usr/bin/env -S node --max-old-space-size=192
// An old generation capped at 192 MiB (the daemon keeps ~20 MiB alive): without a cap, V8 sizes it
// from the machine's memory and let it grow to ~80 MiB between collections while serving pod
// stories, which put the daemon over 200 MiB RSS; with it the heap stays near 40 MiB. The young
// generation keeps V8's default (16 MiB semi-spaces): a 4 MiB one saved ~20 MiB RSS but collected
// every few list requests, promoting half-built responses and tripling list p99 (bench/README.md,
// "Heap flags"). Start the daemon through this shebang (scripts/up.sh, the systemd unit and the
// image do), or keep the flag when starting it as `node bin/cnirec.js`.
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

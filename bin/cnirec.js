#!/usr/bin/env -S node --max-semi-space-size=4 --max-old-space-size=192
// A 4 MiB young generation (V8's default grows it to 16 MiB a half): the daemon's allocations are
// short-lived (rows, responses), and the smaller one kept the API as fast with ~35 MiB less RSS
// on 1M calls (bench/results/api-latency.md). An old generation capped at 192 MiB (the daemon
// keeps ~20 MiB alive): without a cap, V8 sizes it from the machine's memory and let it grow to
// ~80 MiB between collections while serving pod stories, which put the daemon over 200 MiB RSS;
// with it the heap stays near 40 MiB. Start the daemon through this shebang (scripts/up.sh, the
// systemd unit and the image do), or keep both flags when starting it as `node bin/cnirec.js`.
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

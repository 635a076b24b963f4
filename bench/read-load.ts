/**
 * A closed-loop REST load in a process of its own, for read-isolation.ts:
 * `concurrency` clients GET the paths in turn (node:http keep-alive) until
 * SIGTERM, then print one JSON line: the requests answered, the errors and
 * every latency in ms. Its own process, so the load's client work is not
 * on the benchmark's event loop that times the live tail.
 *
 *   node dist/bench/read-load.js <base URL> <concurrency> <path>...
 */

import http from 'node:http';

const [base, concurrencyText, ...paths] = process.argv.slice(2);
const concurrency = Number(concurrencyText);
if (!base || !Number.isInteger(concurrency) || concurrency < 1 || paths.length === 0) {
  console.error('usage: read-load.js <base URL> <concurrency> <path>...');
  process.exit(2);
}

const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
const latenciesMs: number[] = [];
let errors = 0;
let next = 0;
let stopping = false;

const get = (url: string) =>
  new Promise<boolean>((resolve) => {
    const req = http.get(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200));
    });
    req.on('error', () => resolve(false));
  });

async function client(): Promise<void> {
  while (!stopping) {
    const t0 = performance.now();
    const ok = await get(base + paths[next++ % paths.length]!);
    if (ok) latenciesMs.push(performance.now() - t0);
    else errors++;
  }
}

process.on('SIGTERM', () => {
  stopping = true;
  process.stdout.write(`${JSON.stringify({ requests: latenciesMs.length, errors, latenciesMs })}\n`, () => process.exit(0));
});
for (let i = 0; i < concurrency; i++) void client();

/**
 * The live tail under hostile clients, on a real listening server: random
 * and malformed frames (not JSON, unknown types, invalid filters, binary),
 * random connect queries, oversized and fragmented frames, and 1,000
 * clients at once over real sockets. Bad input gets an `error` message or a
 * close code (4400, 1009), never a crash, and the server keeps serving
 * everyone else. Seeded (see test/support/fuzz.ts: FC_SEED, FC_RUNS).
 */

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fcParams } from '../support/fuzz.js';
import { finished, makeCall, startTestApp, TailClient, type TestApp } from './tail-harness.js';

const SWARM = fileURLToPath(new URL('./fixtures/tail-swarm.mjs', import.meta.url));
const SWARM_CLIENTS = 1_000;

let app: TestApp;

beforeAll(async () => {
  // The daemon's defaults (64 KiB frames) but for the replay size.
  app = await startTestApp();
});

afterAll(async () => {
  await app?.close();
});

const connect = async (query = ''): Promise<TailClient> => {
  const client = await TailClient.connect(app.wsBase, query);
  await client.waitFor((m) => m.type === 'hello');
  return client;
};

/** The connection still works: a ping is answered and a new call arrives. */
async function stillServes(client: TailClient): Promise<void> {
  await client.request({ type: 'ping' }, 'pong');
  await client.request({ type: 'filter' }, 'filter.updated');
  const call = makeCall();
  const from = client.messages.length;
  app.collector.emit(finished(call));
  await client.waitFor((m) => m.type === 'call.finished' && m.call?.id === call.id, from);
}

/** A newcomer is served as usual. */
async function serverServes(): Promise<void> {
  const client = await connect();
  await stillServes(client);
  client.close();
  await client.closed;
}

const HOSTILE_STRINGS = ["' OR 1=1 --", '%', '_', '\u0000', '🙂', '', ' ', 'x'.repeat(300), 'ADD', 'demo', '__proto__'];
const fieldValue = fc.oneof(fc.constantFrom(...HOSTILE_STRINGS), fc.string({ unit: 'binary', maxLength: 30 }), fc.boolean(), fc.double(), fc.constant(null), fc.array(fc.nat(), { maxLength: 2 }), fc.object({ maxDepth: 1 }));
const filterMessage = fc
  .dictionary(fc.constantFrom('namespace', 'pod', 'command', 'plugin', 'failed', 'includeVersion', 'namespce', 'since', '__proto__', 'type'), fieldValue, { maxKeys: 4 })
  .map((fields) => JSON.stringify({ ...fields, type: 'filter' }));

/** A frame a client might send: text (JSON or not) or binary. */
const frame: fc.Arbitrary<{ text: string; binary: boolean }> = fc.oneof(
  filterMessage.map((text) => ({ text, binary: false })),
  fc.jsonValue({ maxDepth: 3 }).map((v) => ({ text: JSON.stringify(v) ?? 'null', binary: false })),
  fc.constantFrom('{"type":"ping"}', '{"type":"ping","x":1}', '{"type":"subscribe"}', '{"type":"PING"}', '{', '', 'null', '[]', '"filter"', '{"type":"filter","failed":"yes"}', '{"type":"filter","pod":42}').map((text) => ({ text, binary: false })),
  fc.string({ unit: 'binary', maxLength: 200 }).map((text) => ({ text, binary: false })),
  fc.uint8Array({ maxLength: 200 }).map((a) => ({ text: Buffer.from(a).toString('latin1'), binary: true })),
);

describe('hostile tail messages', () => {
  it('each frame gets one answer (error, pong or filter.updated), and the connection keeps working', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(frame, { minLength: 1, maxLength: 8 }), async (frames) => {
        const client = await connect();
        try {
          for (const f of frames) {
            const from = client.messages.length;
            client.ws.send(f.binary ? Buffer.from(f.text, 'latin1') : f.text, { binary: f.binary });
            const answer = await client.waitFor(() => true, from);
            expect(['error', 'pong', 'filter.updated'], f.text.slice(0, 100)).toContain(answer.type);
            if (answer.type === 'error') expect(answer.error?.code).toBe('bad_request');
          }
          await stillServes(client);
        } finally {
          client.close();
          await client.closed;
        }
      }),
      fcParams(120),
    );
  });

  it('a bad connect query gets an error message and close code 4400 with a short JSON reason; a good one a hello', async () => {
    const key = fc.constantFrom('namespace', 'pod', 'command', 'plugin', 'failed', 'includeVersion', 'since', 'unknown');
    const value = fc.oneof(fc.constantFrom(...HOSTILE_STRINGS, 'true', 'false', '2025-11-21T18:33:20Z', '2025-02-30', '99999999999999999', '1e3'), fc.string({ unit: 'binary', maxLength: 40 }));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(key, value), { maxLength: 4 }), async (pairs) => {
        const query = pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${k}=${encodeURIComponent(Buffer.from(v).toString())}`).join('&')}`;
        const client = await TailClient.connect(app.wsBase, query);
        const first = await client.waitFor(() => true);
        if (first.type === 'hello') {
          client.close();
          await client.closed;
          return;
        }
        expect(first.type).toBe('error');
        expect(first.error?.code).toBe('bad_request');
        const closed = await client.closed;
        expect(closed.code).toBe(4400);
        expect(Buffer.byteLength(closed.reason)).toBeLessThanOrEqual(123);
        expect(() => JSON.parse(closed.reason) as unknown).not.toThrow();
      }),
      fcParams(120),
    );
  });
});

describe('oversized frames', () => {
  const MAX = 64 * 1024;

  it('a frame of exactly the limit is read (and refused as a message); one byte more closes with 1009', async () => {
    const client = await connect();
    const atLimit = JSON.stringify({ type: 'filter', pod: '' }).length;
    await client.request(JSON.stringify({ type: 'filter', pod: 'x'.repeat(MAX - atLimit) }), 'error');
    client.send(JSON.stringify({ type: 'filter', pod: 'x'.repeat(MAX - atLimit + 1) }));
    expect((await client.closed).code).toBe(1009);
    await serverServes();
  });

  it('a message fragmented into frames each under the limit, over it in all, closes with 1009', async () => {
    const client = await connect();
    const piece = Buffer.alloc(16 * 1024, 'a');
    for (let i = 0; i < 5; i++) client.ws.send(piece, { fin: false, binary: false });
    client.ws.send(piece, { fin: true, binary: false });
    expect((await client.closed).code).toBe(1009);
    await serverServes();
  });

  it('a 16 MiB frame closes with 1009 without the server buffering it', async () => {
    const client = await connect();
    client.ws.send(Buffer.alloc(16 * 1024 * 1024, 'b'), { binary: false });
    expect((await client.closed).code).toBe(1009);
    await serverServes();
  });
});

/** The soft limit on open files of this process, from /proc (Node has no getrlimit). */
function openFileLimit(): number {
  const m = /^Max open files\s+(\d+|unlimited)/m.exec(fs.readFileSync('/proc/self/limits', 'utf8'));
  return m?.[1] === 'unlimited' ? Infinity : Number(m?.[1] ?? NaN);
}

describe(`${SWARM_CLIENTS} clients at once`, () => {
  it('all get a published call over real sockets, and the server answers HTTP meanwhile', async () => {
    // The server's side of every connection is a file descriptor here (the clients are in a child).
    const limit = openFileLimit();
    if (!(limit >= SWARM_CLIENTS + 200)) {
      throw new Error(`this test process may open ${limit} files; ${SWARM_CLIENTS + 200} are needed for ${SWARM_CLIENTS} websocket clients: raise the limit (ulimit -n)`);
    }
    // The child raises its own soft limit to the hard one where it can.
    const child = spawn('sh', ['-c', 'ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$0" "$@"', process.execPath, SWARM, `${app.wsBase}/api/v1/tail`, String(SWARM_CLIENTS)], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const lines = createInterface({ input: child.stdout });
    const reports: Array<Record<string, unknown>> = [];
    let wake = () => {};
    lines.on('line', (l) => {
      reports.push(JSON.parse(l) as Record<string, unknown>);
      wake();
    });
    const next = async (key: string, timeoutMs: number): Promise<Record<string, unknown>> => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const error = reports.find((r) => 'error' in r);
        if (error) throw new Error(`tail swarm: ${String(error.error)}`);
        const found = reports.find((r) => key in r);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`tail swarm: no "${key}" within ${timeoutMs} ms (got ${JSON.stringify(reports)})`);
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 200);
        });
      }
    };
    try {
      expect((await next('connected', 30_000)).connected).toBe(SWARM_CLIENTS);
      const metrics = await fetch(`${app.wsBase.replace('ws:', 'http:')}/metrics`);
      expect(metrics.status).toBe(200);
      expect(/^cnirec_ws_clients (\d+)$/m.exec(await metrics.text())?.[1]).toBe(String(SWARM_CLIENTS));

      const call = makeCall();
      app.collector.emit(finished(call));
      const got = await next('received', 30_000);
      expect(got).toEqual({ received: SWARM_CLIENTS, ids: [call.id] });

      // Still responsive to a newcomer while the thousand are connected.
      await serverServes();
    } finally {
      child.stdin.end('stop\n');
      const code = await exited;
      expect(code).toBe(0);
    }
    // Every socket the swarm closed is gone from the hub.
    for (let i = 0; i < 50 && app.app.server.listening; i++) {
      const text = await (await fetch(`${app.wsBase.replace('ws:', 'http:')}/metrics`)).text();
      if (/^cnirec_ws_clients 0$/m.test(text)) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the tail still counts clients after they all closed');
  });
});

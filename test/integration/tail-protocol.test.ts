// The tail's protocol at its edges: bad queries, bad messages, oversized
// frames, pings, plain HTTP requests, dead peers and shutdown. None of them
// may take the server down or disturb other clients.
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { readTailStats } from '../../api/tail/tail-stats.js';
import { finished, makeCall, tailTestKit, type TailClient, type TestApp } from './tail-harness.js';

const tail = tailTestKit();

/** Proves the connection still works: a call emitted now arrives. */
async function stillReceives(app: TestApp, client: TailClient): Promise<void> {
  const call = makeCall();
  app.collector.emit(finished(call));
  await client.waitFor((m) => m.call?.id === call.id);
}

describe('a bad tail query', () => {
  it('gets an error message naming the field, then close code 4400 with a JSON reason', async () => {
    await tail.start();
    const client = await tail.connect('?failed=maybe&namespace=demo');
    const closed = await client.closed;
    expect(closed.code).toBe(4400);
    expect(JSON.parse(closed.reason)).toEqual({ code: 'bad_request', fields: ['failed'] });
    expect(client.messages).toHaveLength(1);
    expect(client.messages[0]).toMatchObject({ type: 'error', error: { code: 'bad_request', issues: [{ path: 'failed' }] } });
  });

  it('names every bad field: an unreadable since and a repeated pod', async () => {
    await tail.start();
    const client = await tail.connect('?since=yesterday&pod=a&pod=b');
    const closed = await client.closed;
    expect(closed.code).toBe(4400);
    expect(JSON.parse(closed.reason).fields.sort()).toEqual(['pod', 'since']);
  });

  it('does not count as a connected client', async () => {
    const app = await tail.start();
    const client = await tail.connect('?command=');
    await client.closed;
    expect(readTailStats(app.app)).toMatchObject({ clients: 0 });
  });
});

describe('a bad client message', () => {
  it.each([
    ['not JSON', 'hello?', 'not valid JSON', undefined],
    ['an unknown type', { type: 'subscribe' }, 'known types', 'type'],
    ['a filter field of the wrong type', { type: 'filter', failed: 'yes' }, 'known types', 'failed'],
    ['a misspelt filter field', { type: 'filter', namespce: 'demo' }, 'namespce: Unknown field', 'namespce'],
  ])('(%s) is answered with a bad_request error and the connection stays open', async (_what, message, text, issuePath) => {
    const app = await tail.start();
    const client = await tail.connect();
    await client.waitFor((m) => m.type === 'hello');
    const answer = await client.request(message, 'error');
    expect(answer.error?.code).toBe('bad_request');
    expect(answer.error?.message).toContain(text);
    if (issuePath !== undefined) expect(answer.error?.issues?.map((i) => i.path)).toContain(issuePath);
    await stillReceives(app, client);
  });

  it('(a binary frame) is answered with an error too', async () => {
    const app = await tail.start();
    const client = await tail.connect();
    const from = client.messages.length;
    client.ws.send(Buffer.from('{"type":"ping"}'), { binary: true });
    const answer = await client.waitFor((m) => m.type === 'error', from);
    expect(answer.error?.message).toContain('Binary frames');
    await stillReceives(app, client);
  });

  it('keeps the filter it had', async () => {
    const app = await tail.start();
    const client = await tail.connect('?pod=web-1');
    await client.request({ type: 'filter', pod: 42 }, 'error');
    const other = makeCall({ podName: 'web-0' });
    const mine = makeCall({ podName: 'web-1' });
    app.collector.emit(finished(other), finished(mine));
    await client.waitFor((m) => m.call?.id === mine.id);
    expect(client.callLog()).toEqual([`call.finished ${mine.id}`]);
  });
});

describe('an oversized frame', () => {
  it('closes that connection with 1009 and leaves the server and other clients running', async () => {
    const app = await tail.start({ tail: { maxPayloadBytes: 1024 } });
    const bystander = await tail.connect();
    const offender = await tail.connect();
    await offender.waitFor((m) => m.type === 'hello');
    offender.send({ type: 'filter', pod: 'x'.repeat(2048) });
    expect((await offender.closed).code).toBe(1009);
    await stillReceives(app, bystander);
  });
});

describe('keeping connections alive', () => {
  it('answers a ping message with a pong', async () => {
    await tail.start();
    const client = await tail.connect();
    expect(await client.request({ type: 'ping' }, 'pong')).toEqual({ type: 'pong' });
  });

  it('drops a peer that stops answering websocket pings', async () => {
    const app = await tail.start({ tail: { heartbeatMs: 100 } });
    const client = await tail.connect();
    await client.waitFor((m) => m.type === 'hello');
    // A vanished peer: the server's pings are never read, so never answered.
    client.rawSocket?.pause();
    await expect.poll(() => readTailStats(app.app)?.clients, { timeout: 5_000 }).toBe(0);
    client.rawSocket?.resume();
    expect((await client.closed).code).toBe(1006);
  });

  it('keeps a peer that answers pings', async () => {
    const app = await tail.start({ tail: { heartbeatMs: 50 } });
    const client = await tail.connect();
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(client.ws.readyState).toBe(WebSocket.OPEN);
    await stillReceives(app, client);
  });
});

describe('the tail endpoint', () => {
  it('answers a plain HTTP request with 426 Upgrade Required', async () => {
    const app = await tail.start();
    const res = await app.app.inject({ method: 'GET', url: '/api/v1/tail' });
    expect(res.statusCode).toBe(426);
    expect(res.json()).toMatchObject({ error: { code: 'upgrade_required' } });
  });

  it('closes its clients with 1001 when the server shuts down', async () => {
    const app = await tail.start();
    const client = await tail.connect();
    await client.waitFor((m) => m.type === 'hello');
    await app.close();
    expect(await client.closed).toEqual({ code: 1001, reason: 'server shutting down' });
  });
});

// Redaction end to end without the tracer: collector events and cache files go through the
// redactor into a real SQLite file, and no secret byte reaches the file, its WAL or the API.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCacheWiring } from '../../daemon/cache-wiring.js';
import { createRedactor } from '../../collector/redact/redact-events.js';
import { compilePointers, defaultRedactionRules } from '../../collector/redact/redaction-rules.js';
import { createCallStore, openDatabase } from '../../store/index.js';
import { finished, getJson, makeCall, makeHelper, startApi, stream, type ApiHarness } from './api-harness.js';

const SECRETS = ['s3cr3t-conf-password', 's3cr3t-ipam-token', 's3cr3t-result-key', 's3cr3t-helper', 's3cr3t-opaque'];
const redactor = createRedactor({ ...defaultRedactionRules(), pointers: compilePointers(['/plugins/*/opaque', '/opaque']) });

const secretConfig = {
  cniVersion: '1.0.0',
  name: 'vnet',
  type: 'vendor',
  password: SECRETS[0],
  opaque: SECRETS[4],
  ipam: { type: 'host-local', token: SECRETS[1], ranges: [[{ subnet: '10.22.0.0/16' }]] },
};
const secretResult = { cniVersion: '1.0.0', ips: [{ address: '10.22.0.5/16' }], vendor: { apiKey: SECRETS[2] } };

function secretCall() {
  return makeCall({
    plugin: 'vendor',
    stdin: stream(JSON.stringify(secretConfig)),
    stdout: stream(JSON.stringify(secretResult)),
    helpers: [makeHelper({ path: '/usr/bin/jq', argv: ['jq', '.'], stdout: stream(`{"credentials":{"user":"u","pass":"${SECRETS[3]}"}}`) })],
  });
}

/** Every file SQLite keeps for `db` (main, WAL, shared memory), concatenated. */
function databaseBytes(db: string): Buffer {
  return Buffer.concat(['', '-wal', '-shm'].map((s) => (fs.existsSync(db + s) ? fs.readFileSync(db + s) : Buffer.alloc(0))));
}

describe('redaction through the store', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cnirec-redact-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('stores redacted payloads with their pointers, and no secret byte in the database files', () => {
    const file = path.join(dir, 'calls.db');
    const store = createCallStore(openDatabase(file));
    const call = secretCall();
    store.writeEvents(redactor.callEvents([{ type: 'call.started', call: { ...call, stdout: stream() } }]));
    store.writeEvents(redactor.callEvents([finished(call)]));
    const stored = store.getCall(call.id)!;
    expect(JSON.parse(stored.stdin.bytes.toString())).toEqual({ ...secretConfig, password: '[redacted]', opaque: '[redacted]', ipam: { ...secretConfig.ipam, token: '[redacted]' } });
    expect(stored.stdin.redactions).toEqual(['/password', '/opaque', '/ipam/token']);
    expect(stored.stdin.totalBytes).toBe(call.stdin.totalBytes);
    expect(stored.stdout.redactions).toEqual(['/vendor/apiKey']);
    expect(stored.stderr.redactions).toBeUndefined();
    expect(stored.helpers[0]!.stdout.redactions).toEqual(['/credentials']);
    const bytes = databaseBytes(file);
    expect(bytes.length).toBeGreaterThan(0);
    for (const s of SECRETS) expect(bytes.includes(s), s).toBe(false);
    store.close();
    for (const s of SECRETS) expect(databaseBytes(file).includes(s), s).toBe(false);
  });

  it('stores libcni cache entries with config, result and capability args redacted', async () => {
    const file = path.join(dir, 'cache.db');
    const results = path.join(dir, 'results');
    fs.mkdirSync(results);
    const db = openDatabase(file);
    const wiring = createCacheWiring(db, { cniCacheDirs: [results], hostLocalDirs: [], cacheRescanMs: 200, db: file }, pino({ level: 'silent' }), redactor);
    await wiring.start();
    try {
      fs.writeFileSync(
        path.join(results, 'vnet-c1-eth0'),
        JSON.stringify({
          kind: 'cniCacheV1',
          containerId: 'c1',
          config: Buffer.from(JSON.stringify({ cniVersion: '1.0.0', name: 'vnet', plugins: [secretConfig] })).toString('base64'),
          ifName: 'eth0',
          networkName: 'vnet',
          cniArgs: [['K8S_POD_NAMESPACE', 'demo'], ['K8S_POD_NAME', 'web-0']],
          capabilityArgs: { token: SECRETS[3] },
          result: secretResult,
        }),
      );
      const end = Date.now() + 5000;
      while (wiring.reader!.listCacheEntries({}).length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      const [entry] = wiring.reader!.listCacheEntries({});
      expect(entry!.redactions).toEqual(['/config/plugins/0/password', '/config/plugins/0/opaque', '/config/plugins/0/ipam/token', '/result/vendor/apiKey', '/capabilityArgs/token']);
      expect(entry!.ips).toEqual(['10.22.0.5']);
      expect((entry!.config as { name: string }).name).toBe('vnet');
    } finally {
      await wiring.stop();
      db.close();
    }
    for (const s of SECRETS) expect(databaseBytes(file).includes(s), s).toBe(false);
  });
});

describe('redaction in the API', () => {
  let api: ApiHarness;
  beforeEach(async () => {
    api = await startApi();
  });
  afterEach(async () => api.close());

  it('shows that a payload was redacted and where, and the replay script says so', async () => {
    const call = redactor.call(secretCall());
    api.write(call);
    interface Payload {
      redacted: boolean;
      base64: string;
    }
    const { status, body } = await getJson<{ stdin: Payload; stdout: Payload; stderr: Payload; config: Record<string, unknown>; helpers: Array<{ stdout: Payload }> }>(
      api.app,
      `/api/v1/calls/${call.id}`,
    );
    expect(status).toBe(200);
    expect(body.stdin).toMatchObject({ redacted: true, redactedPointers: ['/password', '/opaque', '/ipam/token'] });
    expect(body.stdout).toMatchObject({ redacted: true, redactedPointers: ['/vendor/apiKey'] });
    expect(body.stderr).toMatchObject({ redacted: false, redactedPointers: [] });
    expect(body.config.password).toBe('[redacted]');
    expect(body.helpers[0]!.stdout.redacted).toBe(true);
    const replay = await api.app.inject({ method: 'GET', url: `/api/v1/calls/${call.id}/replay` });
    expect(replay.body).toMatch(/^# NOTE: stdin was redacted before it was stored/m);
    const raw = JSON.stringify(body) + replay.body + Buffer.from(body.stdin.base64, 'base64').toString();
    for (const s of SECRETS) expect(raw.includes(s), s).toBe(false);
  });

  it('documents the redaction fields in the OpenAPI schema', async () => {
    const { body } = await getJson<{ components: { schemas: Record<string, { properties: Record<string, unknown> }> } }>(api.app, '/api/v1/openapi.json');
    expect(Object.keys(body.components.schemas.Payload!.properties)).toEqual(expect.arrayContaining(['redacted', 'redactedPointers']));
    expect(Object.keys(body.components.schemas.CacheEntry!.properties)).toEqual(expect.arrayContaining(['redacted', 'redactedPointers']));
  });
});

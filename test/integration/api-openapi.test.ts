// The OpenAPI document is generated from the zod schemas the routes validate with.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type ApiHarness } from './api-harness.js';

interface OpenApiDoc {
  openapi: string;
  paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string; description?: string }>; requestBody?: unknown; responses: Record<string, unknown> }>>;
  components: { schemas: Record<string, unknown> };
}

let h: ApiHarness;
let doc: OpenApiDoc;

beforeAll(async () => {
  h = await startApi();
  const res = await h.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  expect(res.statusCode).toBe(200);
  doc = res.json<OpenApiDoc>();
});

afterAll(async () => {
  await h.close();
});

describe('the OpenAPI document', () => {
  it('lists every REST route with its method', () => {
    const routes = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    expect(routes).toEqual(
      expect.arrayContaining([
        'GET /api/v1/calls',
        'GET /api/v1/calls/{id}',
        'GET /api/v1/calls/{id}/replay',
        'GET /api/v1/pods/{namespace}/{name}',
        'GET /api/v1/node/cni/status',
        'GET /api/v1/tracer',
        'PUT /api/v1/tracer/mode',
        'GET /healthz',
      ]),
    );
    expect(routes.some((r) => r.includes('/api/v1/docs'))).toBe(false);
  });

  it('describes CNI STATUS readiness, the calls’ network and the tail’s network.readiness message', () => {
    const text = JSON.stringify(doc);
    for (const name of ['NetworkReadiness', 'ReadinessTransition']) expect(Object.keys(doc.components?.schemas ?? {})).toContain(name);
    expect(text).toContain('network.readiness');
    expect(text).toContain('gcDriven');
    expect(text).toContain('network-not-ready');
    expect(text).toContain('status-flapping');
  });

  it('documents every list filter as a query parameter with a description', () => {
    const params = doc.paths['/api/v1/calls']!.get!.parameters ?? [];
    expect(params.map((p) => p.name).sort()).toEqual(
      ['namespace', 'pod', 'podUid', 'containerId', 'command', 'plugin', 'network', 'failed', 'minDurationMs', 'since', 'until', 'includeVersion', 'status', 'limit', 'cursor'].sort(),
    );
    expect(params.every((p) => p.in === 'query')).toBe(true);
    expect(params.find((p) => p.name === 'since')?.description).toMatch(/ISO 8601.*epoch milliseconds/);
  });

  it('names the response shapes as components, the recursive call tree included', () => {
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(['CallSummary', 'CallPage', 'CallDetail', 'CallTree', 'PodStory', 'Payload', 'Error', 'TracerStatus']));
    expect(JSON.stringify(doc.components.schemas.CallTree)).toContain('"$ref":"#/components/schemas/CallTree"');
    expect(Object.keys(doc.components.schemas).filter((name) => name.endsWith('Input'))).toEqual([]);
  });

  it('documents the error shape on refusals and the script type on replay', () => {
    const listResponses = JSON.stringify(doc.paths['/api/v1/calls']!.get!.responses);
    expect(listResponses).toContain('"400"');
    expect(listResponses).toContain('#/components/schemas/Error');
    expect(doc.paths['/api/v1/calls/{id}/replay']!.get!.responses['200']).toMatchObject({ content: { 'text/x-shellscript': {} } });
    expect(JSON.stringify(doc.paths['/api/v1/tracer/mode']!.put!.requestBody)).toContain('"light"');
  });

  it('describes the websocket tail and how its filters treat calls and cache entries without a pod', () => {
    const tail = doc.paths['/api/v1/tail']?.get as unknown as { summary?: string; description?: string } | undefined;
    expect(tail?.summary).toMatch(/websocket/);
    expect(tail?.description).toMatch(/without that pod field .* does not match a filter on it/);
    expect(tail?.description).toMatch(/command, plugin and failed describe calls: with any of them set, no cache\.added\/cache\.removed messages/);
  });

  it('is browsable at /api/v1/docs', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/api/v1/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
  });
});

describe('the OpenAPI document, linted', () => {
  it.each([
    ['without a token', null],
    ['with a token', 's3cret'],
  ])("passes Redocly's recommended rules %s (the one warning: a websocket answers 101, never 2xx)", async (_what, token) => {
    const { createConfig, lintFromString } = await import('@redocly/openapi-core');
    const app = await startApi({ token });
    try {
      const res = await app.app.inject({ method: 'GET', url: '/api/v1/openapi.json', headers: token ? { authorization: `Bearer ${token}` } : {} });
      const problems = await lintFromString({ source: res.body, absoluteRef: 'openapi.json', config: await createConfig({ extends: ['recommended'] }) });
      const said = problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}`);
      expect(said).toEqual(['warn operation-2xx-response #/paths/~1api~1v1~1tail/get/responses']);
    } finally {
      await app.close();
    }
  });

  it('applies the bearer scheme to every operation but /healthz when the daemon has a token, and names every operation once', async () => {
    const app = await startApi({ token: 's3cret' });
    try {
      const doc = (await app.app.inject({ method: 'GET', url: '/api/v1/openapi.json', headers: { authorization: 'Bearer s3cret' } })).json<{
        security: unknown;
        servers: unknown[];
        paths: Record<string, Record<string, { operationId?: string; summary?: string; security?: unknown[] }>>;
      }>();
      expect(doc.security).toEqual([{ bearer: [] }]);
      expect(doc.servers).toHaveLength(1);
      const ops = Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method, ...op })));
      expect(ops.find((o) => o.path === '/healthz')?.security).toEqual([]);
      expect(ops.filter((o) => o.path !== '/healthz').every((o) => o.security === undefined)).toBe(true);
      const ids = ops.map((o) => o.operationId);
      expect(ids.every((id) => typeof id === 'string')).toBe(true);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ops.every((o) => (o.summary ?? '').length > 0)).toBe(true);
    } finally {
      await app.close();
    }
  });

  it('describes the tail: its query parameters and its messages as schemas', () => {
    const tail = doc.paths['/api/v1/tail']!.get!;
    expect((tail.parameters ?? []).map((p) => p.name).sort()).toEqual(['command', 'failed', 'includeVersion', 'namespace', 'plugin', 'pod', 'since']);
    expect(JSON.stringify(tail.responses['101'])).toContain('#/components/schemas/TailServerMessage');
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(['TailServerMessage', 'TailGap', 'TailCacheEntry', 'Health', 'Finding', 'FindingPage']));
  });
});

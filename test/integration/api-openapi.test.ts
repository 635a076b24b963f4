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
        'GET /api/v1/tracer',
        'PUT /api/v1/tracer/mode',
        'GET /healthz',
      ]),
    );
    expect(routes.some((r) => r.includes('/api/v1/docs'))).toBe(false);
  });

  it('documents every list filter as a query parameter with a description', () => {
    const params = doc.paths['/api/v1/calls']!.get!.parameters ?? [];
    expect(params.map((p) => p.name).sort()).toEqual(
      ['namespace', 'pod', 'podUid', 'containerId', 'command', 'plugin', 'failed', 'minDurationMs', 'since', 'until', 'includeVersion', 'status', 'limit', 'cursor'].sort(),
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

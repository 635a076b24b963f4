// GET /api/v1/tracer and PUT /api/v1/tracer/mode.
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import type { CaptureMode } from '../../bpf/index.js';
import { createCaptureWiring } from '../../daemon/capture-wiring.js';
import { getJson, startApi, TRACER_STATUS, type ApiHarness, type ErrorBody } from './api-harness.js';

let h: ApiHarness | undefined;

afterEach(async () => {
  await h?.close();
  h = undefined;
});

const putMode = (app: ApiHarness['app'], payload: unknown, headers: Record<string, string> = {}) =>
  app.inject({ method: 'PUT', url: '/api/v1/tracer/mode', payload: payload as string, headers: { 'content-type': 'application/json', ...headers } });

describe('the tracer status', () => {
  it("is the collector's status, and says whether the mode can be switched", async () => {
    h = await startApi();
    const res = await getJson(h.app, '/api/v1/tracer');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...TRACER_STATUS, modeSwitchable: true, capture: null });
  });
});

describe('switching the capture mode', () => {
  it('asks the collector to switch and answers the new status', async () => {
    h = await startApi();
    const res = await putMode(h.app, JSON.stringify({ mode: 'light' }));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ mode: 'light', running: true });
    expect(h.modeSwitches).toEqual(['light']);
  });

  it.each([
    [{ mode: 'lite' }, 'mode'],
    [{}, 'mode'],
    [{ mode: 'full', extra: true }, 'extra'],
  ])('refuses %j naming %s, without touching the tracer', async (body, field) => {
    h = await startApi();
    const res = await putMode(h.app, JSON.stringify(body));
    expect(res.statusCode).toBe(400);
    const { error } = res.json<ErrorBody>();
    expect(error.code).toBe('bad_request');
    expect(error.issues?.map((i) => i.path)).toEqual([field]);
    expect(h.modeSwitches).toEqual([]);
  });

  it('refuses a body that is not JSON with a 400 in the error shape', async () => {
    h = await startApi();
    const res = await putMode(h.app, '{"mode":');
    expect(res.statusCode).toBe(400);
    expect(res.json<ErrorBody>().error.code).toBe('bad_request');
  });

  it('refuses a body of another content type with a 415 in the error shape', async () => {
    h = await startApi();
    const res = await h.app.inject({ method: 'PUT', url: '/api/v1/tracer/mode', payload: 'mode=light', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.statusCode).toBe(415);
    expect(res.json<ErrorBody>().error.code).toBe('unsupported_media_type');
  });

  it('answers 501 for auto, a window or a scope when the daemon has no capture policy', async () => {
    h = await startApi();
    for (const body of [{ mode: 'auto' }, { mode: 'full', forSeconds: 60 }, { mode: 'full', namespace: 'ns' }]) {
      const res = await putMode(h.app, JSON.stringify(body));
      expect(res.statusCode).toBe(501);
    }
    expect(h.modeSwitches).toEqual([]);
  });

  it('answers 501 when this daemon cannot switch modes', async () => {
    h = await startApi({ setCaptureMode: null });
    expect((await getJson(h.app, '/api/v1/tracer')).body).toMatchObject({ modeSwitchable: false });
    const res = await putMode(h.app, JSON.stringify({ mode: 'light' }));
    expect(res.statusCode).toBe(501);
    expect(res.json<ErrorBody>().error.code).toBe('not_implemented');
  });

  it("answers a generic 500 when the switch fails, keeping bpftrace's words for the log", async () => {
    h = await startApi({
      setCaptureMode: async () => {
        throw new Error('bpftrace: ERROR: /sys/kernel/tracing not mounted');
      },
    });
    const res = await putMode(h.app, JSON.stringify({ mode: 'light' }));
    expect(res.statusCode).toBe(500);
    const { error } = res.json<ErrorBody>();
    expect(error.code).toBe('mode_switch_failed');
    expect(res.body).not.toContain('tracing not mounted');
    expect(h.logLines.join('')).toContain('tracing not mounted');
  });
});

describe('the capture policy through the API', () => {
  const withPolicy = async () => {
    let mode: CaptureMode = 'light';
    const switches: CaptureMode[] = [];
    const capture = createCaptureWiring({
      policy: { configured: 'auto', quietMs: 600_000, slowMs: 3000 },
      tracerMode: () => mode,
      setTracerMode: async (m) => {
        switches.push(m);
        mode = m;
      },
      openLoops: () => 0,
      log: pino({ level: 'silent' }),
    });
    h = await startApi({ capture });
    return { switches };
  };

  it('full for 30 minutes for one pod: the tracer switches, the status says why and until when', async () => {
    const { switches } = await withPolicy();
    const before = Date.now();
    const res = await putMode(h!.app, JSON.stringify({ mode: 'full', forSeconds: 1800, pod: 'ns/web' }));
    expect(res.statusCode).toBe(200);
    const capture = res.json().capture;
    expect(capture).toMatchObject({ setting: 'full', configured: 'auto', mode: 'full', scope: { namespace: 'ns', pod: 'web' }, switching: false, lastError: null });
    expect(Date.parse(capture.until) - before).toBeGreaterThanOrEqual(1_800_000);
    expect(switches).toEqual(['full']);
    expect((await getJson(h!.app, '/healthz')).body).toMatchObject({ tracer: { capture: { setting: 'full', mode: 'full' } } });
    const back = await putMode(h!.app, JSON.stringify({ mode: 'auto' }));
    expect(back.json().capture).toMatchObject({ setting: 'auto', mode: 'light', until: null, scope: null });
    expect(switches).toEqual(['full', 'light']);
    const metrics = await h!.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toContain('cnirec_capture_info{setting="auto",configured="auto",mode="light"} 1');
  });

  it.each([
    [{ mode: 'light', pod: 'ns/web' }, 'mode'],
    [{ mode: 'full', pod: 'ns/web', namespace: 'ns' }, 'pod'],
    [{ mode: 'full', pod: 'web' }, 'pod'],
    [{ mode: 'full', forSeconds: 0 }, 'forSeconds'],
  ])('refuses %j naming %s', async (body, field) => {
    const { switches } = await withPolicy();
    const res = await putMode(h!.app, JSON.stringify(body));
    expect(res.statusCode).toBe(400);
    expect(res.json<ErrorBody>().error.issues?.map((i) => i.path)).toContain(field);
    expect(switches).toEqual([]);
  });
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_CACHE_FILE_BYTES } from '../../collector/cache/cache-types.js';
import { parseCacheFile } from '../../collector/cache/parse-cache-file.js';
import { isReservationFileName, parseReservation } from '../../collector/cache/parse-host-local.js';

const DIR = join(import.meta.dirname, '../fixtures/cache/results');
const ID1 = '1'.repeat(64);
const ID2 = '2'.repeat(64);
const parse = (name: string) => parseCacheFile(readFileSync(join(DIR, name)), join(DIR, name), DIR);

describe('parseCacheFile', () => {
  it('decodes what podman 4.3 writes: network name with dashes, config, result IPs, no pod without a namespace', () => {
    const r = parse(`podman-test-net-${ID1}-eth0`);
    if (!r.ok) throw new Error(r.problem.message);
    expect(r.entry).toMatchObject({
      format: 'cniCacheV1',
      containerId: ID1,
      networkName: 'podman-test-net',
      ifName: 'eth0',
      netns: null,
      ips: ['10.213.205.2'],
      pod: null,
      configProblem: null,
      capabilityArgs: { aliases: { 'podman-test-net': [ID1.slice(0, 12)] } },
    });
    expect(r.entry.cniArgs).toEqual([
      ['IgnoreUnknown', '1'],
      ['K8S_POD_NAME', 'peek-container'],
    ]);
    expect((r.entry.config as { name: string; plugins: unknown[] }).name).toBe('podman-test-net');
    expect(r.entry.digest).toMatch(/^[0-9a-f]{64}$/);
  });

  it('attributes the pod from K8S_POD_* args and keeps both address families', () => {
    const r = parse(`k8s-pod-network-${ID2}-eth0`);
    if (!r.ok) throw new Error(r.problem.message);
    expect(r.entry.pod).toEqual({ namespace: 'default', name: 'web-0', uid: 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee', infraContainerId: ID2 });
    expect(r.entry.netns).toBe('/var/run/netns/cni-00000000-1111-2222-3333-444444444444');
    expect(r.entry.ips).toEqual(['10.244.1.7', 'fd00::7']);
  });

  it('accepts an old raw-result file, knowing only its IPs', () => {
    const r = parse('legacy-net-3333333333333333-eth0');
    if (!r.ok) throw new Error(r.problem.message);
    expect(r.entry).toMatchObject({ format: 'legacy', containerId: null, networkName: null, ips: ['10.22.0.5'] });
  });

  it.each([
    ['empty-net-4444-eth0', 'empty-file', /empty/],
    ['truncated-net-5555-eth0', 'corrupt-json', /not valid JSON/],
    ['wrong-shape-net-6666-eth0', 'wrong-shape', /containerId/],
  ])('reports %s as %s', (name, kind, message) => {
    const r = parse(name);
    if (r.ok) throw new Error('expected a problem');
    expect(r.problem.kind).toBe(kind);
    expect(r.problem.message).toMatch(message);
    expect(r.problem.path).toBe(join(DIR, name));
  });

  it('refuses files above 1 MiB without parsing them', () => {
    const r = parseCacheFile(Buffer.alloc(MAX_CACHE_FILE_BYTES + 1, 0x20), '/x/big', '/x');
    expect(r.ok ? null : r.problem.kind).toBe('too-large');
  });

  it('reports a whitespace-only file as empty and JSON that is neither shape as wrong', () => {
    expect(parseCacheFile(Buffer.from(' \n'), '/x/a', '/x')).toMatchObject({ ok: false, problem: { kind: 'empty-file' } });
    expect(parseCacheFile(Buffer.from('[1,2]'), '/x/a', '/x')).toMatchObject({ ok: false, problem: { kind: 'wrong-shape' } });
    expect(parseCacheFile(Buffer.from('{"foo":1}'), '/x/a', '/x')).toMatchObject({ ok: false, problem: { kind: 'wrong-shape' } });
  });

  it('keeps the entry but says why when the embedded config is not base64 JSON', () => {
    const body = { kind: 'cniCacheV1', containerId: 'c', ifName: 'eth0', networkName: 'n', config: Buffer.from('{nope').toString('base64'), result: {} };
    const r = parseCacheFile(Buffer.from(JSON.stringify(body)), '/x/n-c-eth0', '/x');
    if (!r.ok) throw new Error(r.problem.message);
    expect(r.entry.config).toBeNull();
    expect(r.entry.configProblem).toMatch(/not JSON/);
    const bad = parseCacheFile(Buffer.from(JSON.stringify({ ...body, config: '!!!' })), '/x/n-c-eth0', '/x');
    expect(bad.ok && bad.entry.configProblem).toMatch(/not base64/);
  });
});

describe('host-local reservations', () => {
  const NET = join(import.meta.dirname, '../fixtures/cache/networks/podman-test-net');
  it('tells reservation files from bookkeeping', () => {
    expect(isReservationFileName('10.213.205.2')).toBe(true);
    expect(isReservationFileName('fd00::7')).toBe(true);
    expect(isReservationFileName('last_reserved_ip.0')).toBe(false);
    expect(isReservationFileName('lock')).toBe(false);
  });

  it('reads "id\\r\\nifname" and the older id-only form', () => {
    const where = (ip: string) => ({ path: join(NET, ip), dir: '/d', network: 'podman-test-net', ip });
    expect(parseReservation(readFileSync(join(NET, '10.213.205.2'), 'utf8'), where('10.213.205.2'))).toMatchObject({ containerId: ID1, ifName: 'eth0' });
    expect(parseReservation(readFileSync(join(NET, '10.213.205.3'), 'utf8'), where('10.213.205.3'))).toMatchObject({ containerId: ID2, ifName: null });
    expect(parseReservation('', where('10.0.0.1'))).toMatchObject({ containerId: null, ifName: null });
  });
});

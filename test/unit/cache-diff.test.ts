import { describe, expect, it } from 'vitest';
import { diffObservation, type Known, type Observation } from '../../collector/cache/cache-diff.js';
import type { CacheEntry } from '../../collector/cache/cache-types.js';

const entry = (digest: string): CacheEntry => ({
  path: '/r/n-c-eth0',
  dir: '/r',
  format: 'cniCacheV1',
  containerId: 'c',
  networkName: 'n',
  ifName: 'eth0',
  netns: null,
  cniArgs: [],
  capabilityArgs: null,
  config: null,
  configProblem: null,
  result: null,
  ips: [],
  pod: null,
  digest,
  mtimeMs: 1,
});
const good = (digest: string, key = digest): Observation & Known => ({ kind: 'entry', key, entry: entry(digest) });
const bad: Observation & Known = { kind: 'problem', key: 'k', problem: { kind: 'empty-file', path: '/r/n-c-eth0', dir: '/r', message: 'empty' } };
const gone: Observation = { kind: 'gone', path: '/r/n-c-eth0', dir: '/r' };
const types = (prev: Known | undefined, now: Observation) => diffObservation(prev, now, 5).events.map((e) => e.type);

describe('diffObservation', () => {
  it('adds, changes only on different bytes, removes', () => {
    expect(types(undefined, good('a'))).toEqual(['cache.added']);
    expect(types(good('a'), good('a', 'other-inode'))).toEqual([]);
    expect(types(good('a'), good('b'))).toEqual(['cache.changed']);
    expect(types(good('a'), gone)).toEqual(['cache.removed']);
    expect(diffObservation(good('a'), gone, 5).next).toBeUndefined();
  });

  it('reports a problem once, clears it when the file is repaired or removed', () => {
    expect(types(undefined, bad)).toEqual(['cache.problem']);
    expect(types(bad, bad)).toEqual([]);
    expect(types(bad, good('a'))).toEqual(['cache.problem-cleared', 'cache.added']);
    expect(types(bad, gone)).toEqual(['cache.problem-cleared']);
    expect(types(good('a'), bad)).toEqual(['cache.problem']);
  });

  it('allocates and releases IPs, and re-announces one whose holder changed', () => {
    const ip = (id: string): Observation & Known => ({
      kind: 'ip',
      key: id,
      allocation: { path: '/d/n/10.0.0.2', dir: '/d', network: 'n', ip: '10.0.0.2', containerId: id, ifName: 'eth0', mtimeMs: 1 },
    });
    expect(types(undefined, ip('a'))).toEqual(['ip.allocated']);
    expect(types(ip('a'), { ...ip('a'), key: 'touched' })).toEqual([]);
    expect(types(ip('a'), ip('b'))).toEqual(['ip.allocated']);
    expect(types(ip('a'), { kind: 'gone', path: '/d/n/10.0.0.2', dir: '/d' })).toEqual(['ip.released']);
  });
});

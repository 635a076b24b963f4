import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../daemon/config.js';

describe('cache directory settings', () => {
  it('defaults to libcni, multus and host-local locations', () => {
    const cfg = loadConfig({}, {});
    expect(cfg.cniCacheDirs).toEqual(['/var/lib/cni/results', '/var/lib/cni/multus/results']);
    expect(cfg.hostLocalDirs).toEqual(['/var/lib/cni/networks']);
    expect(cfg.cacheRescanMs).toBe(5000);
  });

  it('takes comma-separated lists from flags or CNIREC_* variables; empty turns following off', () => {
    expect(loadConfig({ cniCacheDirs: '/a/results/, /b' }, {}).cniCacheDirs).toEqual(['/a/results', '/b']);
    expect(loadConfig({}, { CNIREC_HOST_LOCAL_DIRS: '' }).hostLocalDirs).toEqual([]);
    expect(loadConfig({}, { CNIREC_CACHE_RESCAN_MS: '1000' }).cacheRescanMs).toBe(1000);
  });

  it('refuses relative directories and silly intervals, naming flag and variable', () => {
    expect(() => loadConfig({ cniCacheDirs: 'results' }, {})).toThrow(/--cni-cache-dirs \(CNIREC_CNI_CACHE_DIRS\): must be absolute/);
    expect(() => loadConfig({ cacheRescanMs: '5' }, {})).toThrow(/--cache-rescan-ms/);
  });
});

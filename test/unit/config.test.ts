import { mkdtempSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, defaultPerfBufferPages, envName, flagName, loadConfig, resolveToken } from '../../daemon/config.js';

describe('daemon configuration', () => {
  it('has a default for every setting', () => {
    const cfg = loadConfig({}, {});
    expect(cfg.listen).toEqual({ host: '127.0.0.1', port: 7070, text: '127.0.0.1:7070' });
    expect(cfg.capture).toBe('auto');
    expect(cfg.perfBufferPages).toBe(defaultPerfBufferPages(availableParallelism()));
    expect(cfg.finalizeGraceMs).toBe(0);
    expect(cfg.mountTracefs).toBe(true);
  });

  it('sizes the perf buffers at 32 MiB over the CPUs, 1024 to 4096 pages a CPU', () => {
    expect([1, 2, 4, 8, 16, 64, 3, 6].map(defaultPerfBufferPages)).toEqual([4096, 4096, 2048, 1024, 1024, 1024, 2048, 1024]);
  });

  it('names flags and variables after the setting', () => {
    expect(flagName('perfBufferPages')).toBe('perf-buffer-pages');
    expect(envName('perfBufferPages')).toBe('CNIREC_PERF_BUFFER_PAGES');
  });

  it('takes CNIREC_* variables, and flags over them', () => {
    expect(loadConfig({}, { CNIREC_CAPTURE: 'light' }).capture).toBe('light');
    expect(loadConfig({ capture: 'full' }, { CNIREC_CAPTURE: 'light' }).capture).toBe('full');
    expect(loadConfig({}, { CNIREC_MOUNT_TRACEFS: 'no' }).mountTracefs).toBe(false);
  });

  it.each([
    ['capture', 'heavy', /--capture \(CNIREC_CAPTURE\)/],
    ['listen', '127.0.0.1', /must be HOST:PORT/],
    ['listen', '127.0.0.1:99999', /port must be/],
    ['perfBufferPages', '1000', /power of two/],
    ['finalizeGraceMs', '-1', /--finalize-grace-ms/],
  ] as const)('rejects %s=%s with a message naming the flag and the variable', (name, value, message) => {
    expect(() => loadConfig({ [name]: value }, {})).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value }, {})).toThrow(message);
  });

  it('refuses to listen beyond loopback without a token', () => {
    expect(() => loadConfig({ listen: '0.0.0.0:7070' }, {})).toThrow(/requires an API token/);
    expect(loadConfig({ listen: '0.0.0.0:7070', token: 's3cret' }, {}).listen.host).toBe('0.0.0.0');
    expect(loadConfig({ listen: '[::1]:7070' }, {}).listen.host).toBe('::1');
  });

  it('reads the token from a file, and says so when it cannot', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cnirec-cfg-'));
    const file = path.join(dir, 'token');
    writeFileSync(file, 'from-file\n');
    expect(resolveToken({ token: '', tokenFile: file })).toBe('from-file');
    expect(resolveToken({ token: 'flag', tokenFile: file })).toBe('flag');
    expect(resolveToken({ token: '', tokenFile: '' })).toBeNull();
    expect(() => resolveToken({ token: '', tokenFile: path.join(dir, 'missing') })).toThrow(/cannot read --token-file .*ENOENT/);
  });
});

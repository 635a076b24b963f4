// What the cache store decides, without a database: how a watcher event changes the stored rows, and how the
// linker picks entries, links calls and words and resolves its findings.
import { describe, expect, it } from 'vitest';
import { addWithoutCacheFinding, cacheFileWrittenAtMs, detectionWindow, leakedIpFinding, linkWindow, newLink, noLongerFound, staleEntryFinding } from '../../store/cache/cache-link-rules.js';
import { goneFromDisk, preloadsLiveRows, reservationChange, versionChange } from '../../store/cache/cache-write-rules.js';

const NOW = 1_763_750_000_000;

describe('cache writes', () => {
  it.each<[string, { id: number; digest: string } | undefined, ReturnType<typeof versionChange>]>([
    ['a new file opens a row', undefined, { kind: 'insert' }],
    ['the same bytes again only touch the live row', { id: 7, digest: 'd1' }, { kind: 'touch', liveId: 7 }],
    ['other bytes replace the live row', { id: 7, digest: 'd0' }, { kind: 'replace', liveId: 7 }],
  ])('%s', (_name, live, change) => {
    expect(versionChange(live, 'd1')).toEqual(change);
  });

  const a = { containerId: 'c1', ifName: 'eth0', mtimeMs: NOW - 5_000 };
  it.each<[string, Parameters<typeof reservationChange>[0], Partial<typeof a>, ReturnType<typeof reservationChange>]>([
    ['the same holder again changes nothing', { container_id: 'c1', if_name: 'eth0' }, {}, { kind: 'unchanged' }],
    ['a first holder holds it from when host-local reserved it', undefined, {}, { kind: 'open', releaseFirst: false, fromMs: NOW - 5_000 }],
    ['a first holder with no mtime holds it from now', undefined, { mtimeMs: 0 }, { kind: 'open', releaseFirst: false, fromMs: NOW }],
    ['a mtime in the future is not believed', undefined, { mtimeMs: NOW + 9_000 }, { kind: 'open', releaseFirst: false, fromMs: NOW }],
    ['a new holder takes over now, after the old one is released', { container_id: 'c0', if_name: 'eth0' }, {}, { kind: 'open', releaseFirst: true, fromMs: NOW }],
  ])('%s', (_name, open, over, change) => {
    expect(reservationChange(open, { ...a, ...over }, NOW)).toEqual(change);
  });

  it('finds the rows whose file a rescan no longer found', () => {
    expect(goneFromDisk([{ path: '/r/a' }, { path: '/r/b' }], new Set(['/r/b']))).toEqual([{ path: '/r/a' }]);
  });

  it('preloads the live rows for a startup-sized batch only', () => {
    expect([preloadsLiveRows(1), preloadsLiveRows(63), preloadsLiveRows(64)]).toEqual([false, false, true]);
  });
});

describe('cache links and findings', () => {
  it('links files once settled, retries recent ones for the window, startup ones briefly, and looks at young links again', () => {
    expect(linkWindow(NOW, 600_000)).toEqual({ since: NOW - 600_000, briefly: NOW - 30_000, settled: NOW - 3_000, relink: NOW - 30_000 });
  });

  it('dates a file by its mtime, or by when it was first seen when the mtime is unknown', () => {
    expect([cacheFileWrittenAtMs(NOW, NOW + 5), cacheFileWrittenAtMs(0, NOW + 5)]).toEqual([NOW, NOW + 5]);
  });

  it.each<[string, { id: string } | undefined, string | null, string | null]>([
    ['links a call found', { id: 'add-1' }, null, 'add-1'],
    ['replaces a link by a better candidate', { id: 'add-2' }, 'add-1', 'add-2'],
    ['leaves a link that is still the best', { id: 'add-1' }, 'add-1', null],
    ['keeps a link when nothing is found', undefined, 'add-1', null],
  ])('%s', (_name, candidate, linked, link) => {
    expect(newLink(candidate, linked)).toBe(link);
  });

  it('judges the ADDs that ended a grace period ago, within the window, and not before the results were first read', () => {
    expect(detectionWindow(NOW, 5_000, 600_000, NOW - 60_000)).toEqual({ fromUs: (NOW - 60_000) * 1000, toUs: (NOW - 5_000) * 1000 });
    expect(detectionWindow(NOW, 5_000, 600_000, NOW - 3_600_000).fromUs).toBe((NOW - 600_000) * 1000);
  });

  it('resolves the open findings whose condition is gone', () => {
    expect(noLongerFound(new Set(['a', 'b', 'c']), new Set(['b']))).toEqual(['a', 'c']);
  });

  it('says what each finding means and what to do, with its subject', () => {
    expect(staleEntryFinding({ path: '/r/f', container_id: 'c1', network_name: 'net', del_id: 'del-1', pod_namespace: 'ns', pod_name: 'web-0' })).toEqual({
      message: expect.stringMatching(/^cache entry \/r\/f is still there although DEL of container c1 succeeded \(call del-1\).*delete the file/),
      path: '/r/f',
      containerId: 'c1',
      network: 'net',
      callId: 'del-1',
      podNamespace: 'ns',
      podName: 'web-0',
    });
    expect(leakedIpFinding({ path: '/n/net/10.0.0.5', ip: '10.0.0.5', network: null, container_id: null, pod_namespace: null, pod_name: null }).message).toMatch(
      /^host-local holds 10\.0\.0\.5 in network \? for container \(none written\).*delete \/n\/net\/10\.0\.0\.5$/,
    );
    expect(addWithoutCacheFinding({ id: 'add-1', container_id: 'c1', ifname: 'eth0', network: 'net', pod_namespace: null, pod_name: null })).toMatchObject({
      message: expect.stringContaining('ADD call add-1 for container c1 (eth0, network net) succeeded but no CNI cache file appeared'),
      callId: 'add-1',
    });
  });
});

import { describe, expect, it } from 'vitest';
import type { BinDirListing, BinEntry } from '../../collector/node-setup/bin-dirs.js';
import type { ConfDirListing } from '../../collector/node-setup/check-view.js';
import { parseConf } from '../../collector/node-setup/conf-file.js';
import { selectConfFiles, type ConfDirFile } from '../../collector/node-setup/conf-selection.js';
import { diagnose, type NodeSnapshot, type RecordKnowledge } from '../../collector/node-setup/doctor.js';
import type { RuntimeCniPaths } from '../../collector/node-setup/types.js';

const CONF = '/etc/cni/net.d';
const BIN = '/opt/cni/bin';
const T0 = Date.parse('2026-01-01T10:00:00Z');

const file = (name: string, content: string | object, mtimeMs = T0): ConfDirFile => {
  const bytes = Buffer.from(typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return { name, path: `${CONF}/${name}`, kind: 'file', size: bytes.length, mtimeMs, read: { ok: true, bytes } };
};
const list = (name: string, plugins: object[], extra: object = {}) => ({ cniVersion: '1.0.0', name, plugins, ...extra });
const bridge = { type: 'bridge', bridge: 'cni0', ipam: { type: 'host-local', ranges: [[{ subnet: '10.1.0.0/24' }]] } };

const exe = (kind: BinEntry['kind'] = 'file', mode = 0o100755): BinEntry => ({ kind, mode, size: 1000, mtimeMs: T0, linkTarget: null });
const bins = (entries: Record<string, BinEntry>, dir = BIN): Map<string, BinDirListing> => new Map([[dir, { dir, exists: true, error: null, entries: new Map(Object.entries(entries)) }]]);
const PLUGINS = { bridge: exe(), 'host-local': exe(), portmap: exe(), loopback: exe() };

const containerd: RuntimeCniPaths = {
  runtime: 'containerd',
  sources: ['/etc/containerd/config.toml'],
  confDir: CONF,
  binDirs: [BIN],
  loader: 'go-cni',
  defaultNetwork: null,
  maxConfNum: 1,
  extraConfDirs: [],
  notes: [],
};

const node = (files: ConfDirFile[], opts: { runtimes?: RuntimeCniPaths[]; bins?: Map<string, BinDirListing>; exists?: boolean } = {}): NodeSnapshot => ({
  runtimes: opts.runtimes ?? [containerd],
  runtimeProblems: [],
  requested: { confDirs: [], binDirs: [] },
  confDirs: new Map<string, ConfDirListing>([[CONF, { dir: CONF, exists: opts.exists ?? true, error: null, files }]]),
  binDirs: opts.bins ?? bins(PLUGINS),
});
const check = (n: NodeSnapshot, record: RecordKnowledge | null = null) => diagnose(n, record, T0 + 3_600_000);
const codes = (n: NodeSnapshot, record: RecordKnowledge | null = null) => check(n, record).problems.map((p) => p.code);

describe('parseConf', () => {
  it.each([
    ['a trailing comma in the plugins list', '{\n  "cniVersion": "1.0.0",\n  "name": "n",\n  "plugins": [\n    {"type": "bridge"},\n  ]\n}', 6, 3],
    ['a missing comma between properties', '{\n  "cniVersion": "1.0.0"\n  "name": "n"\n}', 3, 3],
    ['single quotes', "{\n  'name': 'n'\n}", 2, 3],
    ['a comment', '// my network\n{}', 1, 1],
    ['the end of the file', '{\n  "name": "n",\n', 3, 1],
  ])('places a JSON error where an editor shows it: %s', (_what, text, line, column) => {
    const r = parseConf('10-n.conflist', Buffer.from(text));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.code).toBe('json-syntax');
    expect(r.position).toMatchObject({ line, column });
    expect(r.error).toMatch(new RegExp(`^invalid JSON at line ${line}, column ${column}: `));
  });

  it('says a byte-order mark is the problem', () => {
    const r = parseConf('10-n.conf', Buffer.from('\ufeff{"type":"bridge"}'));
    expect(!r.ok && r.error).toMatch(/byte-order mark/);
  });

  it.each([
    ['10-n.conflist', { cniVersion: '1.0.0', plugins: [bridge] }, /needs a "name"/],
    ['10-n.conflist', { cniVersion: '1.0.0', name: 'n' }, /needs a "plugins" list/],
    ['10-n.conflist', { cniVersion: '1.0.0', name: 'n', plugins: [] }, /empty/],
    ['10-n.conflist', { cniVersion: '1.0.0', name: 'n', plugins: [{ bridge: 'x' }] }, /plugins\[0\] has no "type"/],
    ['10-n.conf', { cniVersion: '1.0.0', name: 'n' }, /no "type"/],
    ['10-n.conf', list('n', [bridge]), /rename it to \.conflist/],
    ['10-n.json', { cniVersion: 1, name: 'n', type: 'bridge' }, /"cniVersion" must be a string/],
  ])('refuses %s as libcni does: %j', (name, json, why) => {
    const r = parseConf(name, Buffer.from(JSON.stringify(json)));
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(why);
  });

  it('lists every type a network needs: plugins, IPAM, Multus delegates and flannel\'s delegate', () => {
    const multus = list('multus', [{ type: 'multus', delegates: [list('pods', [bridge, { type: 'portmap' }]), { type: 'macvlan', ipam: { type: 'whereabouts' } }] }]);
    const r = parseConf('00-multus.conflist', Buffer.from(JSON.stringify(multus)));
    expect(r.ok && r.plugins.map((p) => `${p.type}@${p.at}`)).toEqual([
      'multus@plugins[0].type',
      'bridge@plugins[0].delegates[0].plugins[0].type',
      'host-local@plugins[0].delegates[0].plugins[0].ipam.type',
      'portmap@plugins[0].delegates[0].plugins[1].type',
      'macvlan@plugins[0].delegates[1].type',
      'whereabouts@plugins[0].delegates[1].ipam.type',
    ]);
    const flannel = parseConf('10-flannel.conflist', Buffer.from(JSON.stringify(list('cbr0', [{ type: 'flannel', delegate: { hairpinMode: true } }]))));
    expect(flannel.ok && flannel.plugins.map((p) => p.type)).toEqual(['flannel', 'bridge', 'host-local']);
  });
});

describe('which conf file is active', () => {
  const good = (name: string, net = name) => file(name, list(net, [bridge]));

  it('is the first file in byte order for containerd; the rest are not reached', () => {
    const s = selectConfFiles([good('20-b.conflist', 'b'), good('10-a.conflist', 'a'), file('99-notes.txt', 'x')], { loader: 'go-cni', runtimeLabel: 'containerd', maxConfNum: 1 });
    expect(s.files.map((f) => [f.file.name, f.status])).toEqual([
      ['10-a.conflist', 'active'],
      ['20-b.conflist', 'not-reached'],
      ['99-notes.txt', 'ignored'],
    ]);
  });

  it('sorts by bytes as Go does, not by locale (upper case before lower)', () => {
    const s = selectConfFiles([good('a.conflist', 'lower'), good('Z.conflist', 'upper')], { loader: 'go-cni', runtimeLabel: 'containerd' });
    expect(s.active?.file.name).toBe('Z.conflist');
  });

  it('fails the whole load for containerd when the first file is broken, while CRI-O skips it', () => {
    const files = [file('10-a.conflist', '{"name": "a",'), good('20-b.conflist', 'b')];
    const c = selectConfFiles(files, { loader: 'go-cni', runtimeLabel: 'containerd' });
    expect(c.active).toBeNull();
    expect(c.loadFailure).toMatch(/containerd fails to load 10-a\.conflist/);
    const o = selectConfFiles(files, { loader: 'ocicni', runtimeLabel: 'CRI-O' });
    expect(o.active?.file.name).toBe('20-b.conflist');
    expect(o.files[0]?.status).toBe('skipped');
  });

  it('lets CRI-O skip a file whose plugin is missing and pick its default network by name', () => {
    const files = [good('10-a.conflist', 'a'), good('20-b.conflist', 'b'), good('30-c.conflist', 'c')];
    const s = selectConfFiles(files, { loader: 'ocicni', runtimeLabel: 'CRI-O', pluginsFound: (c) => c.name !== 'a' });
    expect(s.files.map((f) => f.status)).toEqual(['skipped', 'active', 'loaded']);
    expect(selectConfFiles(files, { loader: 'ocicni', runtimeLabel: 'CRI-O', defaultNetwork: 'c' }).active?.file.name).toBe('30-c.conflist');
  });

  it('loads only .conflist files for podman, networks by name', () => {
    const s = selectConfFiles([file('10-a.conf', { cniVersion: '1.0.0', name: 'a', type: 'bridge' }), good('87-podman.conflist', 'podman'), good('90-x.conflist', 'x')], {
      loader: 'podman',
      runtimeLabel: 'podman',
      defaultNetwork: 'podman',
    });
    expect(s.files.map((f) => f.status)).toEqual(['ignored', 'active', 'loaded']);
  });

  it('ignores a repeated network name for CRI-O', () => {
    const s = selectConfFiles([good('10-a.conflist', 'same'), good('20-b.conflist', 'same')], { loader: 'ocicni', runtimeLabel: 'CRI-O' });
    expect(s.files[1]).toMatchObject({ status: 'skipped', why: expect.stringMatching(/already defined by 10-a\.conflist/) });
  });
});

describe('cnirec doctor (the checks)', () => {
  it('reports a good setup as clean', () => {
    const r = check(node([file('10-net.conflist', list('net', [bridge, { type: 'portmap' }]))]));
    expect(r.problems).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r.views[0]?.active).toEqual({ file: '10-net.conflist', network: 'net' });
    expect(r.views[0]?.files[0]?.plugins.map((p) => [p.type, p.path, p.status])).toEqual([
      ['bridge', `${BIN}/bridge`, 'found'],
      ['host-local', `${BIN}/host-local`, 'found'],
      ['portmap', `${BIN}/portmap`, 'found'],
    ]);
  });

  it.each([
    ['an empty conf dir', node([]), 'no-network-config', /holds no network config .* NotReady/],
    ['a missing conf dir', node([], { exists: false }), 'conf-dir-missing', /does not exist, and containerd .* NotReady/],
    ['a JSON typo', node([file('10-net.conflist', '{\n  "name": "net"\n  "cniVersion": "1.0.0"\n}')]), 'json-syntax', /10-net\.conflist: invalid JSON at line 3, column 3: .*containerd stops at it/],
    ['a type with no binary', node([file('10-net.conflist', list('net', [{ type: 'brigde' }]))]), 'plugin-missing', /plugin "brigde" \(plugins\[0\]\.type\) is in none of \/opt\/cni\/bin: every ADD on network "net" fails/],
    [
      'a non-executable binary',
      node([file('10-net.conflist', list('net', [bridge]))], { bins: bins({ ...PLUGINS, bridge: exe('file', 0o100644) }) }),
      'plugin-not-executable',
      /\/opt\/cni\/bin\/bridge \(plugins\[0\]\.type of 10-net\.conflist\) is not executable: .*chmod 755/,
    ],
    ['a directory where a plugin should be', node([file('10-net.conflist', list('net', [bridge]))], { bins: bins({ ...PLUGINS, 'host-local': exe('directory') }) }), 'plugin-not-regular-file', /host-local .* is not a regular file/],
    ['no cniVersion', node([file('10-net.conflist', { name: 'net', plugins: [bridge] })]), 'missing-cni-version', /has no "cniVersion": plugins read it as CNI 0\.1\.0/],
    ['an old cniVersion', node([file('10-net.conflist', list('net', [bridge], { cniVersion: '0.3.1' }))]), 'old-cni-version', /CHECK needs 0\.4\.0/],
    ['a cniVersion that is no version', node([file('10-net.conflist', list('net', [bridge], { cniVersion: 'latest' }))]), 'bad-cni-version', /which is no CNI version/],
  ])('names %s in one line', (_what, n, code, message) => {
    const r = check(n);
    expect(r.ok).toBe(false);
    const p = r.problems.find((x) => x.code === code);
    expect(p?.message).toMatch(message);
    expect(p?.message).not.toContain('\n');
  });

  it('checks cniVersion against the versions the plugin reported in recorded VERSION probes', () => {
    const n = node([file('10-net.conflist', list('net', [bridge], { cniVersion: '1.1.0' }))]);
    expect(codes(n)).toEqual([]);
    const record: RecordKnowledge = { pluginVersions: [{ path: `${BIN}/bridge`, supportedVersions: ['0.3.1', '0.4.0', '1.0.0'], probedAtMs: T0 }], cniPaths: [] };
    const p = check(n, record).problems;
    expect(p.map((x) => x.code)).toEqual(['cni-version-unsupported']);
    expect(p[0]?.message).toMatch(/says "cniVersion": "1\.1\.0" but \/opt\/cni\/bin\/bridge reported supporting only 0\.3\.1, 0\.4\.0, 1\.0\.0 .* set "cniVersion" to 1\.0\.0/);
  });

  it('warns when the file changed last is not the one in effect', () => {
    const n = node([file('10-old.conflist', list('old', [bridge]), T0), file('20-new.conflist', list('new', [bridge]), T0 + 60_000)]);
    const p = check(n).problems;
    expect(p.map((x) => x.code)).toEqual(['shadowed-edit']);
    expect(p[0]?.message).toMatch(/20-new\.conflist was changed last .* but 10-old\.conflist sorts before it and is the network containerd uses, so the change has no effect/);
  });

  it('warns about duplicate network names', () => {
    const n = node([file('10-a.conflist', list('same', [bridge]), T0 + 1), file('20-b.conflist', list('same', [bridge]), T0)], { runtimes: [{ ...containerd, maxConfNum: 0 }] });
    expect(codes(n)).toContain('duplicate-network-name');
  });

  it('says when a conf dir given by hand is not the one the runtime reads, and when recorded calls ran with other bin dirs', () => {
    const n = { ...node([file('10-net.conflist', list('net', [bridge]))]), requested: { confDirs: ['/tmp/other'], binDirs: [] } };
    const r = check({ ...n, confDirs: new Map([['/tmp/other', { dir: '/tmp/other', exists: true, error: null, files: [file('10-net.conflist', list('net', [bridge]))] }]]) });
    expect(r.problems.find((p) => p.code === 'conf-dir-mismatch')?.message).toMatch(/containerd \(\/etc\/containerd\/config\.toml\) reads \/etc\/cni\/net\.d, not the --cni-conf-dir given \(\/tmp\/other\)/);
    const record: RecordKnowledge = { pluginVersions: [], cniPaths: [{ value: '/usr/lib/cni', calls: 12, lastAtMs: T0 }] };
    expect(check(node([file('10-net.conflist', list('net', [bridge]))]), record).problems.map((p) => p.message)).toEqual([expect.stringMatching(/CNI_PATH=\/usr\/lib\/cni \(12 calls/)]);
  });
});

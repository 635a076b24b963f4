import { describe, expect, it } from 'vitest';
import { createBytesRedactor, looksLikeJson } from '../../collector/redact/redact-json-bytes.js';
import { compileKeyPatterns, compilePointers, defaultRedactionRules, MAX_REPORTED_POINTERS, type RedactionRules } from '../../collector/redact/redaction-rules.js';

const defaults = createBytesRedactor(defaultRedactionRules());
const withPointers = (...pointers: string[]) => createBytesRedactor({ ...defaultRedactionRules(), pointers: compilePointers(pointers) });
const text = (r: ReturnType<typeof defaults>) => r?.bytes.toString('utf8');
const json = (r: ReturnType<typeof defaults>) => JSON.parse(text(r)!) as unknown;
const buf = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v));

describe('redacting JSON payload bytes', () => {
  it('replaces values under secret-looking keys, at any depth and in arrays, and names them by JSON pointer', () => {
    const payload = {
      cniVersion: '1.0.0',
      name: 'net',
      plugins: [
        { type: 'bridge', bridge: 'cni0', ipam: { type: 'host-local', token: 's3cr3t-a' } },
        { type: 'vendor', auth: { user: 'u', Password: 's3cr3t-b' }, apiKey: 12345, credentials: { a: ['s3cr3t-c'] } },
      ],
    };
    const r = defaults(buf(payload));
    expect(json(r)).toEqual({
      cniVersion: '1.0.0',
      name: 'net',
      plugins: [
        { type: 'bridge', bridge: 'cni0', ipam: { type: 'host-local', token: '[redacted]' } },
        { type: 'vendor', auth: '[redacted]', apiKey: '[redacted]', credentials: '[redacted]' },
      ],
    });
    expect(r!.pointers).toEqual(['/plugins/0/ipam/token', '/plugins/1/auth', '/plugins/1/apiKey', '/plugins/1/credentials']);
    expect(text(r)).not.toContain('s3cr3t');
  });

  it('keeps every other byte as written: spacing, key order, number spelling, escapes', () => {
    const raw = '{ "b" : 1.50,\n  "password":"x\\"y",  "a": "\\u00e9" , "n": 12345678901234567890 }\n';
    expect(text(defaults(buf(raw)))).toBe('{ "b" : 1.50,\n  "password":"[redacted]",  "a": "\\u00e9" , "n": 12345678901234567890 }\n');
  });

  it('returns null (keep the bytes) for payloads with nothing secret and for non-JSON payloads', () => {
    expect(defaults(buf({ cniVersion: '1.0.0', type: 'bridge', ipMasq: true, hairpinMode: true, ipam: { type: 'host-local', ranges: [[{ subnet: '10.1.0.0/16' }]] } }))).toBeNull();
    expect(defaults(buf('password: hunter2\n'))).toBeNull();
    expect(defaults(buf('error: token "abc" invalid'))).toBeNull();
    expect(defaults(Buffer.alloc(0))).toBeNull();
    expect(defaults(Buffer.from([0xff, 0xfe, 0x7b]))).toBeNull();
    expect(looksLikeJson(buf('  \n[1]'))).toBe(true);
    expect(looksLikeJson(buf('x{}'))).toBe(false);
  });

  it('redacts JSON inside log text line by line: a plugin logging its config in an error message', () => {
    const log = [
      'time="2026-11-22T01:02:03Z" level=info msg="setting up"',
      'failed to set up pod: invalid config {"name":"net","type":"vendor","token":"s3cr3t-a","ipam":{"type":"host-local"}} (retrying)',
      'an unbalanced " quote on this line must not hide the next one',
      'E1122 01:02:03 delegate [{"type":"x","auth":{"password":"s3cr3t-b"}}]',
      'plain text with braces { not json } stays',
    ].join('\n');
    const r = defaults(buf(log));
    expect(text(r)).toBe(
      [
        'time="2026-11-22T01:02:03Z" level=info msg="setting up"',
        'failed to set up pod: invalid config {"name":"net","type":"vendor","token":"[redacted]","ipam":{"type":"host-local"}} (retrying)',
        'an unbalanced " quote on this line must not hide the next one',
        'E1122 01:02:03 delegate [{"type":"x","auth":"[redacted]"}]',
        'plain text with braces { not json } stays',
      ].join('\n'),
    );
    expect(r!.pointers).toEqual(['/token', '/0/auth']);
    expect(defaults(buf('error: no config {"name":"net","type":"bridge"}\n'))).toBeNull();
  });

  it('leaves the fields of the reference and common plugins alone', () => {
    const configs = [
      { cniVersion: '1.0.0', name: 'n', type: 'bridge', bridge: 'cni0', isGateway: true, isDefaultGateway: true, forceAddress: false, ipMasq: true, mtu: 1500, hairpinMode: true, promiscMode: false, vlan: 0, macspoofchk: true, enabledad: false, ipam: { type: 'host-local', dataDir: '/var/lib/cni/networks', resolvConf: '/etc/resolv.conf', ranges: [[{ subnet: '10.88.0.0/16', rangeStart: '10.88.0.2', rangeEnd: '10.88.0.254', gateway: '10.88.0.1' }]], routes: [{ dst: '0.0.0.0/0' }] } },
      { type: 'portmap', capabilities: { portMappings: true }, snat: true, masqAll: false, markMasqBit: 13, externalSetMarkChain: 'KUBE-MARK-MASQ', conditionsV4: ['-s', '1.2.3.4'], backend: 'iptables', runtimeConfig: { portMappings: [{ hostPort: 8080, containerPort: 80, protocol: 'tcp', hostIP: '' }] } },
      { type: 'tuning', mac: 'aa:bb:cc:dd:ee:ff', promisc: true, allmulti: true, mtu: 9000, txQLen: 1000, sysctl: { 'net.core.somaxconn': '500', 'net.ipv4.conf.IFNAME.arp_filter': '1' } },
      { type: 'bandwidth', ingressRate: 1, ingressBurst: 2, egressRate: 3, egressBurst: 4, shapedSubnets: ['10.0.0.0/8'] },
      { type: 'multus', kubeconfig: '/etc/cni/net.d/multus.d/multus.kubeconfig', clusterNetwork: 'k8s-pod-network', delegates: [{ type: 'flannel', delegate: { hairpinMode: true, isDefaultGateway: true } }], confDir: '/etc/cni/net.d', cniDir: '/var/lib/cni/multus', binDir: '/opt/cni/bin', readinessindicatorfile: '', logLevel: 'verbose', namespaceIsolation: false },
      { type: 'calico', log_level: 'info', datastore_type: 'kubernetes', nodename: 'node1', mtu: 1440, etcd_endpoints: 'https://1.2.3.4:2379', etcd_key_file: '/etc/calico/key.pem', etcd_cert_file: '/etc/calico/cert.pem', etcd_ca_cert_file: '/etc/calico/ca.pem', ipam: { type: 'calico-ipam', assign_ipv4: 'true' }, policy: { type: 'k8s' }, kubernetes: { kubeconfig: '/etc/cni/net.d/calico-kubeconfig', k8s_api_root: 'https://10.96.0.1:443', k8s_client_certificate: '/c.pem', k8s_client_key: '/k.pem', k8s_certificate_authority: '/ca.pem' } },
      { type: 'flannel', subnetFile: '/run/flannel/subnet.env', dataDir: '/var/lib/cni/flannel', delegate: { hairpinMode: true, isDefaultGateway: true } },
      { type: 'cilium-cni', 'enable-debug': false, 'log-file': '/var/run/cilium/cilium-cni.log', 'chaining-mode': 'none' },
      { cniVersion: '1.0.0', interfaces: [{ name: 'eth0', mac: '0a:58:0a:f4:01:05', sandbox: '/var/run/netns/x', mtu: 1500 }], ips: [{ address: '10.244.1.5/24', gateway: '10.244.1.1', interface: 0 }], routes: [{ dst: '0.0.0.0/0', gw: '10.244.1.1' }], dns: { nameservers: ['10.96.0.10'], domain: 'cluster.local', search: ['default.svc.cluster.local'], options: ['ndots:5'] } },
    ];
    for (const c of configs) expect(defaults(buf(c)), JSON.stringify(c)).toBeNull();
  });

  it('catches the credentials real plugins carry', () => {
    const r = defaults(buf({ kubernetes: { k8s_auth_token: 'eyJhbGciOi' }, etcd_key: 'k', client_secret: 'c', 'client-key-data': 'LS0t', privateKey: 'wg', psk: 'p', bearerToken: 'b' }));
    expect(Object.values(json(r) as object).every((v) => v === '[redacted]' || (typeof v === 'object' && Object.values(v as object)[0] === '[redacted]'))).toBe(true);
    expect(r!.pointers).toHaveLength(7);
  });

  it('redacts any string holding a PEM private key, whatever its key', () => {
    const pem = '-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\n';
    const r = defaults(buf({ tls: { crt: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----', material: pem }, list: ['a', pem] }));
    expect(json(r)).toEqual({ tls: { crt: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----', material: '[redacted]' }, list: ['a', '[redacted]'] });
    expect(r!.pointers).toEqual(['/tls/material', '/list/1']);
  });

  it('redacts by JSON pointer, with ~0/~1 escapes and * for any key or index', () => {
    const payload = { 'a/b': { 'c~d': 'x1' }, plugins: [{ opaque: 'x2' }, { opaque: 'x3', keep: 'y' }], top: 'x4', arr: ['y', 'x5'] };
    const r = withPointers('/a~1b/c~0d', '/plugins/*/opaque', '/top', '/arr/1')(buf(payload));
    expect(json(r)).toEqual({ 'a/b': { 'c~d': '[redacted]' }, plugins: [{ opaque: '[redacted]' }, { opaque: '[redacted]', keep: 'y' }], top: '[redacted]', arr: ['y', '[redacted]'] });
    expect(r!.pointers).toEqual(['/a~1b/c~0d', '/plugins/0/opaque', '/plugins/1/opaque', '/top', '/arr/1']);
  });

  it('matches keys written with escapes by their decoded name', () => {
    const r = defaults(buf('{"pass\\u0077ord":"x"}'));
    expect(text(r)).toBe('{"pass\\u0077ord":"[redacted]"}');
    expect(r!.pointers).toEqual(['/password']);
  });

  it('redacts a secret in a payload cut at the capture cap, up to the end', () => {
    const full = JSON.stringify({ name: 'n', password: 'hunter2-very-long-secret', more: 1 });
    const cut = Buffer.from(full.slice(0, full.indexOf('hunter2') + 4));
    expect(text(defaults(cut))).toBe('{"name":"n","password":"[redacted]"');
    const cutObject = Buffer.from('{"credentials":{"user":"u","pass":"hun');
    expect(text(defaults(cutObject))).toBe('{"credentials":"[redacted]"');
  });

  it('scans several documents in a row and ignores stray bytes between them', () => {
    const r = defaults(buf('{"token":"a"}\n{"x":1} garbage: {"secret":"b"}'));
    expect(text(r)).toBe('{"token":"[redacted]"}\n{"x":1} garbage: {"secret":"[redacted]"}');
  });

  it('redacts whole values nested deeper than it tracks, and survives hostile nesting', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    const r = defaults(buf(deep));
    expect(r).not.toBeNull();
    expect(r!.pointers).toHaveLength(1);
    expect(() => defaults(buf('{'.repeat(50_000) + '"'))).not.toThrow();
  });

  it('handles a multi-MiB payload with a secret at its end, reporting at most the pointer cap', () => {
    const big = { cniVersion: '1.0.0', entries: Array.from({ length: 40_000 }, (_, i) => ({ name: `if${i}`, mac: '0a:58:0a:f4:01:05', mtu: 1500 })), token: 's3cr3t-end' };
    const bytes = buf(big);
    expect(bytes.length).toBeGreaterThan(2 * 1024 * 1024);
    const r = defaults(bytes);
    expect(r!.pointers).toEqual(['/token']);
    expect(r!.bytes.length).toBe(bytes.length - '"s3cr3t-end"'.length + '"[redacted]"'.length);
    const many = defaults(buf({ list: Array.from({ length: 500 }, () => ({ password: 'x' })) }));
    expect(many!.pointers).toHaveLength(MAX_REPORTED_POINTERS);
    expect(text(many)).not.toContain('"x"');
  });

  it('uses only the rules it is given', () => {
    const none: RedactionRules = { keys: [], keysExcept: [], pointers: [] };
    expect(createBytesRedactor(none)(buf({ password: 'x' }))).toBeNull();
    const custom = createBytesRedactor({ keys: compileKeyPatterns(['^vendorOpaque$']), keysExcept: [], pointers: [] });
    expect(text(custom(buf({ vendoropaque: 'x', password: 'y' })))).toBe('{"vendoropaque":"[redacted]","password":"y"}');
  });
});

/**
 * Redaction cost: how long the collector's redactor takes per payload, for
 * the payloads a call really carries (a compact conf with prevResult on
 * stdin, a result on stdout, plain-text stderr) and for big ones, against
 * JSON.parse of the same bytes in the same run (the least any reader of
 * the JSON pays), so the ratio holds up on a busy machine.
 *
 *   npm run build && node dist/bench/redact.js
 *
 * Writes bench/results/redact.json and bench/results/redact.md.
 */

import { writeFileSync, mkdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { createRedactor } from '../collector/redact/redact-events.js';
import { defaultRedactionRules } from '../collector/redact/redaction-rules.js';
import type { CniCall } from '../collector/types.js';

const RESULTS = path.resolve(import.meta.dirname, '../../bench/results');
const redactor = createRedactor(defaultRedactionRules());

const result = { cniVersion: '1.0.0', interfaces: [{ name: 'cni0', mac: '4e:1a:08:6b:2c:11' }, { name: 'veth8c3f2a1b', mac: '2a:9e:51:c0:7d:03' }, { name: 'eth0', mac: '0a:58:0a:f4:01:05', sandbox: '/var/run/netns/cni-0c8e7d2a-5b1f-4c3e-9a6d-2f8b1e4c7a90' }], ips: [{ address: '10.244.1.5/24', gateway: '10.244.1.1', interface: 2 }], routes: [{ dst: '0.0.0.0/0', gw: '10.244.1.1' }], dns: { nameservers: ['10.96.0.10'], search: ['default.svc.cluster.local', 'svc.cluster.local', 'cluster.local'], options: ['ndots:5'] } };
const conf = { cniVersion: '1.0.0', name: 'k8s-pod-network', type: 'portmap', snat: true, capabilities: { portMappings: true }, runtimeConfig: { portMappings: [{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }] }, prevResult: result };
const withSecret = { ...conf, kubernetes: { kubeconfig: '/etc/cni/net.d/calico-kubeconfig', k8s_auth_token: 'eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.e30.c2lnbmF0dXJl' } };
const big = { cniVersion: '1.0.0', interfaces: Array.from({ length: 20_000 }, (_, i) => ({ name: `veth${i.toString(16)}`, mac: '0a:58:0a:f4:01:05', mtu: 1500 })) };

const cases: Array<[string, Buffer]> = [
  ['stdin: conf with prevResult (no secret)', Buffer.from(JSON.stringify(conf))],
  ['stdin: the same with a k8s_auth_token', Buffer.from(JSON.stringify(withSecret))],
  ['stdout: result', Buffer.from(JSON.stringify(result))],
  ['stderr: log text (scanned line by line for JSON)', Buffer.from('time="2026-11-21T21:00:00Z" level=info msg="Calico CNI IPAM assigned addresses IPv4=[10.244.1.5/24]"\n'.repeat(4))],
  ['helper stdout: 1 MiB JSON (no secret)', Buffer.from(JSON.stringify(big))],
];

function time(fn: () => void, minMs: number): { perOpUs: number; ops: number } {
  for (let i = 0; i < 50; i++) fn();
  let ops = 0;
  const t0 = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < minMs * 1e6) {
    fn();
    ops++;
    elapsed = Number(process.hrtime.bigint() - t0);
  }
  return { perOpUs: elapsed / 1000 / ops, ops };
}

const load = { before: loadavg()[0]! };
const rows = cases.map(([name, bytes]) => {
  const stream = { bytes, totalBytes: bytes.length, truncated: false };
  const minMs = bytes.length > 100_000 ? 3000 : 1500;
  const redact = time(() => redactor.stream(stream), minMs);
  // Plain text is not JSON: what the redactor is compared with there is decoding it, the cheapest look at it.
  const parse = time(() => {
    try {
      JSON.parse(bytes.toString('utf8'));
    } catch {
      // not JSON
    }
  }, minMs);
  const out = redactor.stream(stream);
  return {
    name,
    bytes: bytes.length,
    redacted: out.redactions ?? [],
    redactUs: Number(redact.perOpUs.toFixed(2)),
    jsonParseUs: Number(parse.perOpUs.toFixed(2)),
    ratioToJsonParse: Number((redact.perOpUs / parse.perOpUs).toFixed(2)),
    mbPerSecond: Number((bytes.length / redact.perOpUs).toFixed(1)),
  };
});
// Command lines: a bridge ADD's helpers as bridge runs them (iptables, ip), payloads empty so only argv is looked at.
const empty = { bytes: Buffer.alloc(0), totalBytes: 0, truncated: false };
const helperArgv = [
  ['iptables', '-t', 'nat', '-N', 'CNI-3f7a1c9e0b2d4e5f6a7b8c9d', '--wait'],
  ['iptables', '-t', 'nat', '-A', 'CNI-3f7a1c9e0b2d4e5f6a7b8c9d', '-d', '10.244.1.0/24', '-j', 'ACCEPT', '-m', 'comment', '--comment', 'name: "k8s-pod-network" id: "4b1e"', '--wait'],
  ['iptables', '-t', 'nat', '-A', 'CNI-3f7a1c9e0b2d4e5f6a7b8c9d', '!', '-d', '224.0.0.0/4', '-j', 'MASQUERADE', '-m', 'comment', '--comment', 'name: "k8s-pod-network" id: "4b1e"', '--wait'],
  ['iptables', '-t', 'nat', '-A', 'POSTROUTING', '-s', '10.244.1.5', '-j', 'CNI-3f7a1c9e0b2d4e5f6a7b8c9d', '-m', 'comment', '--comment', 'name: "k8s-pod-network" id: "4b1e"', '--wait'],
  ['ip', '-n', 'cni-0c8e7d2a', 'link', 'set', 'eth0', 'up'],
];
const callWithHelpers = {
  argv: ['/opt/cni/bin/bridge'],
  stdin: empty,
  stdout: empty,
  stderr: empty,
  helpers: helperArgv.map((argv, i) => ({ pid: 10 + i, argv, stdout: empty, stderr: empty })),
} as unknown as CniCall;
const argvUs = Number(time(() => redactor.call(callWithHelpers), 1500).perOpUs.toFixed(2));
console.log(`command lines of ${helperArgv.length} helpers: ${argvUs} µs`);
const perCall = rows[0]!.redactUs + rows[2]!.redactUs + rows[3]!.redactUs + argvUs;
const report = {
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', node: process.version, loadAverage1m: { before: load.before, after: loadavg()[0]! } },
  rules: 'defaults',
  rows,
  argvOfHelpersUs: argvUs,
  typicalCallUs: Number(perCall.toFixed(2)),
};
for (const r of rows) console.log(`${r.name.padEnd(42)} ${String(r.bytes).padStart(8)} B  ${String(r.redactUs).padStart(9)} µs  JSON.parse ${r.jsonParseUs} µs  ×${r.ratioToJsonParse}`);
mkdirSync(RESULTS, { recursive: true });
writeFileSync(path.join(RESULTS, 'redact.json'), `${JSON.stringify(report, null, 2)}\n`);
writeFileSync(
  path.join(RESULTS, 'redact.md'),
  [
    '# Redaction benchmark',
    '',
    `${report.date}, ${report.machine.cpus} × ${report.machine.model}, Node ${report.machine.node}; 1-minute load average ${load.before.toFixed(2)} before, ${report.machine.loadAverage1m.after.toFixed(2)} after (a shared machine: compare the ratio column, measured in the same run).`,
    'Default rules. "JSON.parse" is parsing the same bytes once, the least any reader of the JSON pays.',
    '',
    '| payload | bytes | redact µs | JSON.parse µs | ratio | MB/s | redacted |',
    '|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.name} | ${r.bytes} | ${r.redactUs} | ${r.jsonParseUs} | ${r.ratioToJsonParse} | ${r.mbPerSecond} | ${r.redacted.join(', ') || '—'} |`),
    '',
    `The command lines of a bridge ADD's ${helperArgv.length} helpers (4 iptables, 1 ip; nothing to redact): ${argvUs} µs.`,
    '',
    `A typical call (conf on stdin, result on stdout, text on stderr, those helpers) costs ${report.typicalCallUs} µs of redaction.`,
    '',
  ].join('\n'),
);

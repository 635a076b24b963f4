// Secrets on helpers' command lines: hidden with the same key rules as JSON payloads.
import { describe, expect, it } from 'vitest';
import { redactArgv, redactCniArgs } from '../../collector/redact/redact-argv.js';
import { createRedactor } from '../../collector/redact/redact-events.js';
import { compileKeyPatterns, defaultRedactionRules, keyClassifier } from '../../collector/redact/redaction-rules.js';
import type { CniCall, HelperProcess } from '../../collector/types.js';

const isSecretKey = keyClassifier(defaultRedactionRules());
const redact = (...argv: string[]) => redactArgv(argv, isSecretKey) ?? argv;

describe('argv redaction', () => {
  it.each<[string, string[], string[]]>([
    ['--flag=value', ['etcdctl', '--password=hunter2', 'get', 'k'], ['etcdctl', '--password=[redacted]', 'get', 'k']],
    ['-flag=value', ['tool', '-token=abc'], ['tool', '-token=[redacted]']],
    ['a bare name=value', ['vendor-cli', 'api_key=abc', 'region=eu'], ['vendor-cli', 'api_key=[redacted]', 'region=eu']],
    ['--flag value', ['etcdctl', '--password', 'hunter2', 'get', 'k'], ['etcdctl', '--password', '[redacted]', 'get', 'k']],
    ['-flag value', ['tool', '-auth-token', 'abc', '-v'], ['tool', '-auth-token', '[redacted]', '-v']],
    ['an HTTP header', ['curl', '-H', 'Authorization: Bearer abc.def', '-H', 'Accept: application/json', 'https://api'], ['curl', '-H', 'Authorization: [redacted]', '-H', 'Accept: application/json', 'https://api']],
    ['a header given as --flag=value', ['wget', '--header=Cookie: s=1', '--url=https://u:p@h/'], ['wget', '--header=Cookie: [redacted]', '--url=https://u:[redacted]@h/']],
    ['a URL’s password', ['curl', 'https://admin:s3cr3t@10.0.0.1:2379/v2/keys?x=1'], ['curl', 'https://admin:[redacted]@10.0.0.1:2379/v2/keys?x=1']],
  ])('hides %s', (_name, argv, expected) => {
    expect(redact(...argv)).toEqual(expected);
  });

  it('leaves ordinary helper command lines alone, returning null', () => {
    for (const argv of [
      ['iptables', '-t', 'nat', '-A', 'POSTROUTING', '-s', '10.88.0.0/16', '-p', 'tcp', '-j', 'MASQUERADE', '-m', 'comment', '--comment', 'name: "podman"'],
      ['ip', '-k', 'link', 'set', 'veth1', 'up'],
      ['tc', 'qdisc', 'add', 'dev', 'eth0', 'root', 'tbf', 'rate', '1mbit'],
      ['curl', 'https://10.0.0.1:2379/health', '--key-file', '/etc/ssl/key.pem', '--tokenPath=/var/run/secrets/token'],
      ['sysctl', '-w', 'net.ipv4.ip_forward=1'],
      ['/opt/cni/bin/bridge'],
      [],
    ]) {
      expect(redactArgv(argv, isSecretKey), argv.join(' ')).toBeNull();
    }
  });

  it('hides a secret flag that ends the command line without touching anything else', () => {
    expect(redact('tool', '--password')).toEqual(['tool', '--password']);
  });

  it('follows the configured key rules', () => {
    const custom = keyClassifier({ keys: compileKeyPatterns(['^community$']), keysExcept: [] });
    expect(redactArgv(['snmpget', '--community', 'public', '--token', 't'], custom)).toEqual(['snmpget', '--community', '[redacted]', '--token', 't']);
    expect(redactArgv(['curl', '--token', 't'], keyClassifier({ keys: [], keysExcept: [] }))).toBeNull();
  });

  it('is applied to calls and their helpers before anything is published, and keeps untouched ones as they were', () => {
    const helper = (argv: string[]) => ({ pid: 2, argv, stdout: { bytes: Buffer.alloc(0) }, stderr: { bytes: Buffer.alloc(0) } }) as unknown as HelperProcess;
    const empty = { bytes: Buffer.alloc(0), totalBytes: 0, truncated: false };
    const quiet = helper(['ip', 'link']);
    const call = { argv: ['/opt/cni/bin/vendor'], cniArgs: null, env: {}, stdin: empty, stdout: empty, stderr: empty, helpers: [quiet, helper(['curl', '-H', 'X-Auth-Token: abc'])] } as unknown as CniCall;
    const out = createRedactor(defaultRedactionRules()).call(call);
    expect(out.helpers[0]).toBe(quiet);
    expect(out.helpers[1]!.argv).toEqual(['curl', '-H', 'X-Auth-Token: [redacted]']);
    expect(out.argv).toBe(call.argv);
  });
});

describe('CNI_ARGS redaction', () => {
  it('hides the value of a key that names a secret, keeping the pod identity and the format', () => {
    const args = 'IgnoreUnknown=1;K8S_POD_NAMESPACE=shop;K8S_POD_NAME=cart-0;VENDOR_API_KEY=abc;Token=x=y';
    expect(redactCniArgs(args, isSecretKey)).toBe('IgnoreUnknown=1;K8S_POD_NAMESPACE=shop;K8S_POD_NAME=cart-0;VENDOR_API_KEY=[redacted];Token=[redacted]');
    expect(redactCniArgs('IgnoreUnknown=1;K8S_POD_NAMESPACE=shop;K8S_POD_NAME=cart-0;K8S_POD_INFRA_CONTAINER_ID=abc', isSecretKey)).toBeNull();
    expect(redactCniArgs('', isSecretKey)).toBeNull();
  });

  it('is applied to the call’s cniArgs and its env before anything is published', () => {
    const empty = { bytes: Buffer.alloc(0), totalBytes: 0, truncated: false };
    const cniArgs = 'K8S_POD_NAME=p;AUTH_TOKEN=t0k';
    const call = { argv: ['/opt/cni/bin/vendor'], cniArgs, env: { CNI_COMMAND: 'ADD', CNI_ARGS: cniArgs }, stdin: empty, stdout: empty, stderr: empty, helpers: [] } as unknown as CniCall;
    const out = createRedactor(defaultRedactionRules()).call(call);
    expect(out.cniArgs).toBe('K8S_POD_NAME=p;AUTH_TOKEN=[redacted]');
    expect(out.env).toEqual({ CNI_COMMAND: 'ADD', CNI_ARGS: 'K8S_POD_NAME=p;AUTH_TOKEN=[redacted]' });
  });
});

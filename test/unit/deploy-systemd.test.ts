// deploy/systemd: the unit passes `systemd-analyze verify` (in a scratch
// root that holds the installed binary, so the check covers ExecStart too),
// runs what install.sh installs, and names only settings the daemon has.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { envName, loadConfig, settings, type SettingName } from '../../daemon/config.js';
import { parseRunFlags } from '../../cli/main.js';
import { itNeeds } from '../support/host-check.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DIR = path.join(ROOT, 'deploy/systemd');
const unitText = fs.readFileSync(path.join(DIR, 'cnirec.service'), 'utf8');
const installText = fs.readFileSync(path.join(DIR, 'install.sh'), 'utf8');
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; bin: Record<string, string>; files: string[] };
const ENV_NAMES = (Object.keys(settings) as SettingName[]).map(envName);

/** `Key=value` lines of one section (comments and blank lines dropped; repeated keys kept in order). */
function section(text: string, name: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) current = header[1]!;
    else if (current === name) {
      const eq = line.indexOf('=');
      out.push([line.slice(0, eq), line.slice(eq + 1)]);
    }
  }
  return out;
}

const service = section(unitText, 'Service');
const value = (key: string) => service.filter(([k]) => k === key).map(([, v]) => v);
const execStart = value('ExecStart')[0]!.split(/\s+/);

const systemdAnalyze = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
const noSystemd = systemdAnalyze.error ? 'systemd-analyze is not installed (apt-get install -y systemd; scripts/test.sh does)' : null;

describe('the systemd unit', () => {
  itNeeds(noSystemd, 'passes systemd-analyze verify without a warning', () => {
    // A scratch root with the system's own units (for the targets it orders against) and an executable
    // where ExecStart points, as install.sh leaves it.
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cnirec-unit-'));
    try {
      const units = path.join(root, 'usr/lib/systemd/system');
      fs.mkdirSync(path.dirname(units), { recursive: true });
      fs.cpSync('/usr/lib/systemd/system', units, { recursive: true, verbatimSymlinks: true });
      const bin = path.join(root, execStart[0]!);
      fs.mkdirSync(path.dirname(bin), { recursive: true });
      fs.writeFileSync(bin, '#!/bin/sh\n', { mode: 0o755 });
      const unit = path.join(root, 'etc/systemd/system/cnirec.service');
      fs.mkdirSync(path.dirname(unit), { recursive: true });
      fs.copyFileSync(path.join(DIR, 'cnirec.service'), unit);
      const res = spawnSync('systemd-analyze', ['verify', '--man=no', '--generators=no', `--root=${root}`, unit], { encoding: 'utf8' });
      expect(`${res.stdout}${res.stderr}`.trim()).toBe('');
      expect(res.status).toBe(0);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('runs `cnirec run` where install.sh installs the package, with flags the daemon accepts', () => {
    const prefix = /^PREFIX=(\S+)/m.exec(installText)?.[1];
    expect(execStart[0]).toBe(path.posix.join(prefix!, Object.values(pkg.bin)[0]!));
    expect(execStart[1]).toBe('run');
    expect(() => parseRunFlags(execStart.slice(2))).not.toThrow();
  });

  it('keeps its database in its StateDirectory, readable by root only', () => {
    const env = Object.fromEntries(value('Environment').map((e) => e.split('=', 2) as [string, string]));
    const config = loadConfig(parseRunFlags(execStart.slice(2)), env);
    expect(path.dirname(config.db)).toBe(`/var/lib/${value('StateDirectory')[0]}`);
    expect(value('StateDirectoryMode')).toEqual(['0700']);
  });

  it('names only CNIREC_* variables the daemon has, in the unit and in the settings file it reads', () => {
    for (const e of value('Environment')) expect(ENV_NAMES, e).toContain(e.split('=')[0]);
    const envFile = value('EnvironmentFile')[0]!.replace(/^-/, '');
    expect(installText).toContain(`deploy/systemd/cnirec.env ${envFile}`);
    const names = [...fs.readFileSync(path.join(DIR, 'cnirec.env'), 'utf8').matchAll(/^#?\s*(CNIREC_\w+)=/gm)].map((m) => m[1]!);
    expect(names.length).toBeGreaterThan(0);
    for (const n of names) expect(ENV_NAMES, n).toContain(n);
  });

  it('restarts on failure but not on exit code 2 (configuration or host problem), and gives the daemon time to flush', () => {
    expect(value('Restart')).toEqual(['on-failure']);
    expect(value('RestartPreventExitStatus')).toEqual(['2']);
    expect(value('KillMode')).toEqual(['mixed']);
    expect(Number.parseInt(value('TimeoutStopSec')[0]!, 10)).toBeGreaterThan(5);
  });

  it('keeps the capabilities bpftrace needs and the JITs working', () => {
    const caps = value('CapabilityBoundingSet')[0]!.split(/\s+/);
    expect(caps).toEqual(expect.arrayContaining(['CAP_BPF', 'CAP_PERFMON', 'CAP_SYS_ADMIN']));
    expect(value('MemoryDenyWriteExecute')).toEqual([]);
    expect(value('PrivateNetwork')).toEqual([]);
    expect(value('User')).toEqual([]); // root
  });
});

describe('install.sh', () => {
  it('installs everything package.json ships (bin, dist, the bpftrace program) with the lockfile', () => {
    const copied = installText
      .split('\n')
      .filter((l) => /^cp /.test(l))
      .flatMap((l) => l.split(/\s+/).slice(1, -1).filter((w) => !w.startsWith('-')));
    for (const f of [...pkg.files, 'package.json', 'package-lock.json']) expect(copied, f).toContain(f);
    expect(installText).toMatch(/npm install --omit=dev/);
  });

  it('is valid bash', () => {
    const res = spawnSync('bash', ['-n', path.join(DIR, 'install.sh')], { encoding: 'utf8' });
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
  });
});

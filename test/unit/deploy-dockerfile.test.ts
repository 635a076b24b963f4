// The Dockerfile, checked without a container engine: its instructions
// parsed, every file it copies present in the build context (and not
// ignored), every apt package real in Debian 12, every npm command naming
// a real script or dependency, the entrypoint a real bin and command, and
// the image as the DaemonSet runs it.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { parseDocument } from 'yaml';
import { envName, loadConfig, settings, type SettingName } from '../../daemon/config.js';
import { main } from '../../cli/main.js';
import { itNeeds } from '../support/host-check.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const pkg = JSON.parse(read('package.json')) as { version: string; bin: Record<string, string>; scripts: Record<string, string>; dependencies: Record<string, string> };

interface Instruction {
  readonly keyword: string;
  readonly args: string;
  readonly stage: number;
}

/** Instructions in order, continuation lines joined, comments dropped; `stage` counts FROMs from 0. */
function parseDockerfile(text: string): Instruction[] {
  const joined = text.replace(/\\\n/g, ' ');
  const out: Instruction[] = [];
  let stage = -1;
  for (const raw of joined.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([A-Za-z]+)\s+(.*)$/.exec(line);
    if (!m) throw new Error(`cannot parse Dockerfile line: ${line}`);
    const keyword = m[1]!.toUpperCase();
    if (keyword === 'FROM') stage++;
    out.push({ keyword, args: m[2]!.replace(/\s+/g, ' ').trim(), stage });
  }
  return out;
}

/** .dockerignore patterns as anchored regexes (the subset Docker documents: `*`, `**`, plain paths). */
function ignoreMatchers(text: string): RegExp[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((p) => {
      expect(p.startsWith('!'), `exceptions are not handled by this check: ${p}`).toBe(false);
      const re = p
        .replace(/^\/+|\/+$/g, '')
        .split('**')
        .map((part) => part.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]'))
        .join('.*');
      return new RegExp(`^${re}(/.*)?$`);
    });
}

/** The files a COPY source stands for in the context (a directory: every file git tracks under it). */
function contextFiles(source: string): string[] {
  const tracked = execFileSync('git', ['ls-files', '--', source], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
  return tracked;
}

const words = (args: string) => args.split(' ').filter(Boolean);

const instructions = parseDockerfile(read('Dockerfile'));
const stages = instructions.filter((i) => i.keyword === 'FROM').map((i) => {
  const [image, as, name] = words(i.args);
  return { image: image!, name: as?.toUpperCase() === 'AS' ? name! : null };
});
const finalStage = stages.length - 1;
const inStage = (n: number) => instructions.filter((i) => i.stage === n);
const runs = instructions.filter((i) => i.keyword === 'RUN').flatMap((i) => i.args.split(/&&|;/).map((c) => c.trim()));

describe('the Dockerfile', () => {
  it('builds on Node.js 24, the current LTS (bookworm-slim), in every stage', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const s of stages) expect(s.image).toBe('node:24-bookworm-slim');
  });

  it('copies only files that are in the build context and not ignored', () => {
    const ignored = ignoreMatchers(read('.dockerignore'));
    const copies = instructions.filter((i) => i.keyword === 'COPY' && !i.args.startsWith('--from='));
    expect(copies.length).toBeGreaterThan(0);
    for (const copy of copies) {
      const sources = words(copy.args).slice(0, -1);
      for (const source of sources) {
        const files = contextFiles(source);
        expect(files.length, `COPY ${source}: not in the repository`).toBeGreaterThan(0);
        for (const f of files) expect(ignored.find((re) => re.test(f)), `COPY ${source}: ${f} is excluded by .dockerignore`).toBeUndefined();
      }
    }
  });

  it('copies into the build stage every source directory the build compiles (all but the benchmarks)', () => {
    const build = JSON.parse(read('tsconfig.build.json')) as { include: string[] };
    const copied = inStage(0)
      .filter((i) => i.keyword === 'COPY')
      .flatMap((i) => words(i.args).slice(0, -1));
    for (const dir of build.include.filter((d) => d !== 'bench')) expect(copied, dir).toContain(dir);
    for (const f of ['tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json']) expect(copied, f).toContain(f);
    // Nothing the daemon runs may need bench/, which the image leaves out.
    const fromBench = spawnSync('git', ['grep', '-l', '-e', "from '\\.\\./bench/", '--', 'cli', 'daemon', 'collector', 'store', 'api', 'bpf', 'lib'], { cwd: ROOT, encoding: 'utf8' });
    expect(fromBench.status, fromBench.stdout).toBe(1); // git grep: 1 = no match
  });

  it('copies from the build stage only what it produced there (package.json, node_modules, dist)', () => {
    const buildName = stages[0]!.name;
    const workdir = inStage(0).find((i) => i.keyword === 'WORKDIR')!.args;
    const fromBuild = inStage(finalStage).filter((i) => i.keyword === 'COPY' && i.args.startsWith('--from='));
    for (const copy of fromBuild) {
      const [from, source] = words(copy.args);
      expect(from).toBe(`--from=${buildName}`);
      expect(['package.json', 'node_modules', 'dist'].map((p) => path.posix.join(workdir, p))).toContain(source);
    }
    expect(fromBuild.map((c) => words(c.args)[1])).toContain(path.posix.join(workdir, 'dist'));
  });

  it('runs npm commands that name real scripts and dependencies, and leaves the dev dependencies out', () => {
    const npm = runs.filter((c) => c.startsWith('npm '));
    expect(npm.length).toBeGreaterThan(0);
    for (const cmd of npm) {
      const [, sub, ...rest] = words(cmd);
      const positional = rest.filter((w) => !w.startsWith('-'));
      if (sub === 'run') expect(pkg.scripts, cmd).toHaveProperty(positional[0]!);
      else if (sub === 'rebuild') for (const p of positional) expect(pkg.dependencies, cmd).toHaveProperty(p);
      else expect(['install', 'ci', 'prune'], cmd).toContain(sub);
    }
    expect(npm.some((c) => /^npm (prune|ci|install)\b.*--omit=dev/.test(c))).toBe(true);
  });

  it('starts `cnirec run` through the package’s own bin', async () => {
    const entrypoint = JSON.parse(inStage(finalStage).find((i) => i.keyword === 'ENTRYPOINT')!.args) as string[];
    expect(entrypoint).toEqual(['cnirec', 'run']);
    const link = runs.find((c) => c.startsWith('ln -s '))!;
    const [, , target, linkPath] = words(link);
    expect(path.posix.basename(linkPath!)).toBe(entrypoint[0]);
    const workdir = inStage(finalStage).find((i) => i.keyword === 'WORKDIR')!.args;
    expect(path.posix.relative(workdir, target!)).toBe(path.posix.normalize(pkg.bin[entrypoint[0]!]!));
    // The bin is in the final image, and the bpftrace program where bpf/program.ts looks for it.
    const copied = inStage(finalStage).filter((i) => i.keyword === 'COPY' && !i.args.startsWith('--from=')).map((i) => words(i.args)[0]);
    expect(copied).toEqual(expect.arrayContaining(['bin', 'bpf/cnirec.bt']));
    // `run` is a command the CLI knows: an unknown flag is a usage error about the flag, not the command.
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await main([entrypoint[1]!, '--no-such-flag'])).toBe(2);
      expect(stderr.mock.calls.map((c) => String(c[0])).join('')).toMatch(/--no-such-flag/);
    } finally {
      stderr.mockRestore();
    }
  });

  it('sets only CNIREC_* variables the configuration knows, with values it accepts', () => {
    const env = Object.fromEntries(
      instructions
        .filter((i) => i.keyword === 'ENV' && i.stage === finalStage)
        .map((i) => {
          const m = /^(\w+)[= ](.*)$/.exec(i.args)!;
          return [m[1]!, m[2]!] as const;
        }),
    );
    for (const name of Object.keys(env)) expect((Object.keys(settings) as SettingName[]).map(envName), name).toContain(name);
    expect(() => loadConfig({}, env)).not.toThrow();
  });

  it('is the image the DaemonSet runs: no command override, only flags as args', () => {
    const docs = read('deploy/kubernetes/cnirec.yaml').split(/^---$/m).map((d) => parseDocument(d, { version: '1.1' }).toJS() as Record<string, unknown> | null);
    const ds = docs.find((d) => d?.kind === 'DaemonSet') as { spec: { template: { spec: { containers: Array<{ command?: string[]; args?: string[] }> } } } };
    const container = ds.spec.template.spec.containers[0]!;
    expect(container.command).toBeUndefined();
    for (const arg of container.args ?? []) expect(arg.startsWith('--'), arg).toBe(true);
  });

  it('lays out a runnable image: the final stage’s files and link, assembled in a scratch root, run the CLI and find the bpftrace program', () => {
    expect(fs.existsSync(path.join(ROOT, 'dist/cli/main.js')), 'run npm run build first').toBe(true);
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cnirec-image-'));
    try {
      const buildDir = inStage(0).find((i) => i.keyword === 'WORKDIR')!.args;
      const workdir = path.join(root, inStage(finalStage).find((i) => i.keyword === 'WORKDIR')!.args);
      fs.mkdirSync(workdir, { recursive: true });
      for (const copy of inStage(finalStage).filter((i) => i.keyword === 'COPY')) {
        const parts = words(copy.args);
        const fromBuild = parts[0]!.startsWith('--from=');
        const [source, dest] = fromBuild ? [path.posix.relative(buildDir, parts[1]!), parts[2]!] : [parts[0]!, parts[1]!];
        const target = path.resolve(workdir, dest === './' ? path.basename(source) : dest);
        fs.mkdirSync(path.dirname(target), { recursive: true });
        // The build stage's node_modules is this checkout's (same lockfile), linked rather than copied.
        if (source === 'node_modules') fs.symlinkSync(fs.realpathSync(path.join(ROOT, source)), target);
        else fs.cpSync(path.join(ROOT, source), target, { recursive: true });
      }
      for (const link of runs.filter((c) => c.startsWith('ln -s'))) {
        const [target, linkPath] = words(link).filter((w) => !w.startsWith('-')).slice(1);
        fs.mkdirSync(path.dirname(path.join(root, linkPath!)), { recursive: true });
        fs.symlinkSync(path.join(root, target!), path.join(root, linkPath!));
      }
      const entry = path.join(root, 'usr/local/bin', (JSON.parse(inStage(finalStage).find((i) => i.keyword === 'ENTRYPOINT')!.args) as string[])[0]!);
      const help = spawnSync(entry, ['help'], { encoding: 'utf8' });
      expect(help.stderr).toBe('');
      expect(help.stdout).toMatch(/^usage: cnirec/);
      const program = spawnSync(process.execPath, ['--input-type=module', '-e', `import { programPath } from ${JSON.stringify(path.join(workdir, 'dist/bpf/program.js'))}; console.log(programPath());`], { encoding: 'utf8' });
      expect(program.stdout.trim(), program.stderr).toBe(path.join(workdir, 'bpf/cnirec.bt'));
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  describe('apt packages', () => {
    const packages = runs
      .filter((c) => c.startsWith('apt-get install'))
      .flatMap((c) => words(c).slice(2).filter((w) => !w.startsWith('-')));
    const osRelease = fs.existsSync('/etc/os-release') ? fs.readFileSync('/etc/os-release', 'utf8') : '';
    const aptProblem = !/^VERSION_CODENAME=bookworm$/m.test(osRelease)
      ? 'the apt lists here are not Debian 12 (bookworm), the image’s distribution'
      : !fs.existsSync('/var/lib/apt/lists') || !fs.readdirSync('/var/lib/apt/lists').some((f) => /_Packages(\.\w+)?$/.test(f))
        ? 'apt has no package lists here (run apt-get update)'
        : null;

    it('installs bpftrace in the final image', () => {
      const final = inStage(finalStage).filter((i) => i.keyword === 'RUN').map((i) => i.args).join(' ');
      expect(final).toMatch(/apt-get install[^&]*\bbpftrace\b/);
      expect(packages.length).toBeGreaterThan(1);
    });

    itNeeds(aptProblem, 'names only packages Debian 12 has, and a bpftrace of 0.17 or newer', () => {
      // One apt-cache run for all (loading its cache is the slow part); it fails naming any it lacks.
      const res = spawnSync('apt-cache', ['show', '--no-all-versions', ...packages], { encoding: 'utf8' });
      expect(res.stderr.trim(), `apt-cache show ${packages.join(' ')}`).toBe('');
      const records = res.stdout.split(/\n\n+/).filter((r) => /^Package: /m.test(r));
      const found = records.map((r) => /^Package: (\S+)/m.exec(r)![1]);
      expect(found.sort()).toEqual([...new Set(packages)].sort());
      const bpftrace = records.find((r) => /^Package: bpftrace$/m.test(r))!;
      const version = /^Version: (\d+)\.(\d+)/m.exec(bpftrace);
      expect(Number(version![1]) > 0 || Number(version![2]) >= 17, `bpftrace ${version![0]}`).toBe(true);
    });
  });
});

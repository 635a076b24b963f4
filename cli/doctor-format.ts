/**
 * `cnirec doctor`'s human output, from the report as the API shapes it:
 * the runtimes found and the paths they read, each conf dir as its reader
 * sees it (the active file and why, every other file and why not, each
 * plugin's binary), what the record adds, then the problems, one line each.
 * Pure, for tests.
 */

import type { DoctorReportBody, ReadinessList } from '../api/index.js';
import { bold, dim, green, red, yellow } from './output.js';
import { formatRuntime, type DoctorRuntime } from './doctor-runtime.js';

type View = DoctorReportBody['views'][number];
type File = View['files'][number];

const LOADERS: Readonly<Record<View['loader'], string>> = {
  'go-cni': 'first file in byte order wins; a file it cannot load stops it',
  ocicni: 'files it cannot load or whose plugins are missing are skipped',
  podman: '.conflist files only, networks by name',
  libcni: 'the first file in byte order wins',
};

const STATUS: Readonly<Record<File['status'], (s: string) => string>> = {
  active: green,
  loaded: (s) => s,
  skipped: red,
  'not-reached': dim,
  ignored: dim,
  unchecked: yellow,
};

export function formatDoctor(
  r: DoctorReportBody,
  opts: { readonly daemonNote: string | null; readonly readiness?: ReadinessList['items'] | null; readonly runtime?: DoctorRuntime | null },
): string[] {
  const out: string[] = [bold("cnirec doctor: the node's CNI setup")];
  out.push('', bold('runtimes'));
  if (r.runtimes.length === 0) out.push(`  ${dim('none found (no containerd, CRI-O or podman config, no kubelet running): checking the libcni defaults')}`);
  for (const rt of r.runtimes) {
    const reads = rt.confDir === null ? 'runs no CNI' : `conf dir ${rt.confDir}, bin dirs ${rt.binDirs.join(', ')}`;
    out.push(`  ${bold(rt.runtime.padEnd(10))} ${reads}  ${dim(`(${rt.sources.join(', ')})`)}`);
    for (const x of rt.extraConfDirs) out.push(`  ${' '.repeat(10)} runtime class ${x.handler}: conf dir ${x.confDir}`);
    for (const n of rt.notes) out.push(`  ${' '.repeat(10)} ${dim(n)}`);
  }
  for (const v of r.views) out.push('', ...formatView(v));
  out.push('', bold('record'));
  if (r.record === null) out.push(`  ${dim(opts.daemonNote ?? 'no daemon asked: cniVersion is not checked against recorded VERSION probes')}`);
  else {
    out.push(`  ${r.record.probedPlugins} plugin binar${r.record.probedPlugins === 1 ? 'y' : 'ies'} with recorded VERSION probes`);
    for (const p of r.record.cniPaths) out.push(`  calls ran with CNI_PATH=${p.value} ${dim(`(${p.calls} calls, last ${p.lastAt})`)}`);
  }
  if (opts.runtime) out.push('', ...formatRuntime(opts.runtime));
  if (opts.readiness) out.push('', ...formatReadiness(opts.readiness));
  out.push('');
  if (r.problems.length === 0) out.push(green('no problems found'));
  else {
    out.push(bold(`problems (${r.problems.length})`));
    for (const p of r.problems) out.push(`  ${(p.severity === 'error' ? red : yellow)(p.severity.padEnd(7))} ${p.message}`);
  }
  return out;
}

function formatView(v: View): string[] {
  const who = v.readBy === 'flag' ? `as given by --cni-conf-dir${v.loader === 'libcni' ? '' : `, read as ${v.label} does`}` : v.readBy === 'default' ? 'the libcni default (no runtime config found)' : `as ${v.label} reads it`;
  const out = [`${bold(v.confDir)} ${who} ${dim(`(${LOADERS[v.loader]}${v.defaultNetwork ? `; default network "${v.defaultNetwork}"` : ''})`)}`];
  if (!v.confDirExists) return [...out, `  ${red('does not exist')}`];
  if (v.files.length === 0) out.push(`  ${red('empty')}`);
  const width = Math.min(40, Math.max(...v.files.map((f) => f.name.length), 4));
  for (const f of v.files) {
    const what = f.network !== null ? `network "${f.network}"${f.cniVersion ? `, cniVersion ${f.cniVersion}` : ', no cniVersion'}` : '';
    const why = f.why ? `${what ? ': ' : ''}${f.why}` : '';
    out.push(`  ${f.name.padEnd(width)}  ${STATUS[f.status](f.status.padEnd(11))} ${what}${dim(why)}`);
    if (f.plugins.length > 0) {
      const plugins = f.plugins.map((p) => (p.status === 'found' ? `${p.type} → ${p.path}${p.supportedVersions ? dim(` (${p.supportedVersions.join(' ')})`) : ''}` : red(`${p.type}: ${p.status}`)));
      out.push(`  ${' '.repeat(width)}    ${plugins.join(', ')}`);
    }
  }
  if (v.active === null && v.loadFailure) out.push(`  ${red(`no network: ${v.loadFailure}`)}`);
  return out;
}

/** Each network as its plugins answer CNI STATUS (what the daemon recorded). */
export function formatReadiness(items: ReadinessList['items']): string[] {
  const out = [bold('readiness (CNI STATUS)')];
  if (items.length === 0) out.push(`  ${dim('no STATUS recorded (runtimes ask it of cniVersion 1.1.0 networks: containerd 2.0.1 and later, CRI-O)')}`);
  for (const n of items) {
    const name = n.network === null ? '(network not known)' : `"${n.network}"`;
    const state = n.ready === null ? dim('never asked') : n.ready ? green('ready') : red('not ready');
    const latency = n.latency.p99Ms === null ? '' : `, p50 ${n.latency.p50Ms} ms, p99 ${n.latency.p99Ms} ms`;
    out.push(`  ${name} ${state}${n.since ? ` since ${n.since}` : ''} ${dim(`(${n.checks} checks, last ${n.lastCheckedAt ?? '—'}${latency})`)}`);
    if (n.ready === false && n.plugin !== null) {
      const e = n.error;
      const what = e === null ? 'a failure' : `${e.code === null ? 'error' : `error ${e.code}`}${e.msg === null ? ' (its message comes with the next check captured with payloads)' : `: ${e.msg}`}`;
      out.push(`    ${red(`${n.plugin} answers ${what}`)}: the runtime reports the node NotReady`);
    }
  }
  return out;
}

/**
 * The checks of one view (a conf dir as one runtime reads it): which file is
 * the pod's network and why, every file the runtime refuses or passes over,
 * cniVersion, duplicate names, and every plugin type against the bin dirs
 * and against the versions the plugin reported in recorded VERSION probes.
 * Each problem is one line: what is wrong, what it does to pods, what to do.
 */

import { resolvePlugin, type BinDirListing } from './bin-dirs.js';
import { selectConfFiles, type ConfDirFile, type FileVerdict } from './conf-selection.js';
import type { ParsedConf } from './conf-file.js';
import type { FileReport, PluginCheck, ViewReport } from './report.js';
import type { DoctorProblem, Severity } from './types.js';
import type { CheckView } from './views.js';
import { compareVersions, isVersion } from './cni-version.js';
import { isoFromMs } from '../../lib/index.js';

export interface ConfDirListing {
  readonly dir: string;
  readonly exists: boolean;
  readonly error: string | null;
  readonly files: readonly ConfDirFile[];
}

/** What recorded VERSION probes said, by plugin path. */
export type ReportedVersions = ReadonlyMap<string, { readonly supportedVersions: readonly string[]; readonly probedAtMs: number }>;

type Loaded = Extract<ParsedConf, { ok: true }>;

export function checkView(view: CheckView, listing: ConfDirListing | undefined, bins: ReadonlyMap<string, BinDirListing>, reported: ReportedVersions | null): { report: ViewReport; problems: DoctorProblem[] } {
  const problems: DoctorProblem[] = [];
  const add = (severity: Severity, code: DoctorProblem['code'], message: string, path: string | null = null, network: string | null = null) =>
    problems.push({ code, severity, message, path, network });
  const who = view.label;
  const base = { readBy: view.readBy, label: view.label, source: view.source, confDir: view.confDir, binDirs: view.binDirs, loader: view.loader, maxConfNum: view.maxConfNum, defaultNetwork: view.defaultNetwork };
  const where = view.source ? ` (${view.source})` : '';

  if (!listing?.exists || listing.error !== null) {
    if (listing?.error) add('error', 'conf-dir-unreadable', `cannot list ${view.confDir}: ${listing.error}; run cnirec doctor as root`, view.confDir);
    else add('error', 'conf-dir-missing', `${view.confDir} does not exist, and ${who}${where} reads its networks there: the node stays NotReady ("cni plugin not initialized") and pods get no network; install your network's conf file there, or fix the runtime's conf dir`, view.confDir);
    return { report: { ...base, confDirExists: listing?.exists ?? false, files: [], active: null, loadFailure: 'the directory does not exist' }, problems };
  }

  const plugins = (conf: Loaded): PluginCheck[] =>
    conf.plugins.map((p) => {
      const r = resolvePlugin(p.type, view.binDirs, bins);
      const path = r.status === 'missing' ? null : r.path;
      return { type: p.type, at: p.at, path, status: r.status, supportedVersions: path ? (reported?.get(path)?.supportedVersions ?? null) : null };
    });
  const selection = selectConfFiles(listing.files, {
    loader: view.loader,
    runtimeLabel: who,
    maxConfNum: view.maxConfNum,
    defaultNetwork: view.defaultNetwork,
    pluginsFound: (conf) => plugins(conf).every((p) => p.status === 'found'),
  });

  const eligible = selection.files.filter((v) => v.status !== 'ignored');
  if (eligible.length === 0) {
    add('error', 'no-network-config', `${view.confDir} holds no network config (no ${view.loader === 'podman' ? '.conflist' : '.conf, .conflist or .json'} file), and ${who}${where} reads it: the node stays NotReady ("cni plugin not initialized") and pods get no network; install your network (its DaemonSet writes the file) or add a conflist there`, view.confDir);
  }

  const files: FileReport[] = selection.files.map((v) => {
    const conf = v.parsed?.ok ? v.parsed : null;
    return {
      name: v.file.name,
      path: v.file.path,
      status: v.status,
      why: v.why,
      network: conf ? (conf.name ?? null) : null,
      cniVersion: conf?.cniVersion ?? null,
      sizeBytes: v.file.size,
      mtimeMs: v.file.mtimeMs,
      plugins: conf ? plugins(conf) : [],
    };
  });

  const activeName = selection.active?.parsed?.ok ? (selection.active.parsed.name ?? selection.active.file.name) : null;
  for (const [i, v] of selection.files.entries()) {
    const f = files[i] as FileReport;
    if (v.status === 'ignored') continue;
    // A file the runtime never reaches breaks nothing today, but will the day it sorts first.
    const later = v.status === 'not-reached';
    const addLater: FileContext['add'] = (_severity, code, message, path, network) => add('warning', code, `not in use now, but ${message}`, path, network);
    fileProblems(v, f, { view, who, where, activeName, failed: selection.loadFailure !== null, add: later ? addLater : add, reported });
  }

  duplicateNames(selection.files, add, who);
  const active = selection.active;
  if (active && (view.loader === 'libcni' || (view.loader === 'go-cni' && (view.maxConfNum ?? 1) === 1) || (view.loader === 'ocicni' && !view.defaultNetwork))) {
    const newest = [...eligible].filter((v) => v.file.kind === 'file').sort((a, b) => b.file.mtimeMs - a.file.mtimeMs)[0];
    if (newest && newest !== active && newest.file.mtimeMs > active.file.mtimeMs) {
      add(
        'warning',
        'shadowed-edit',
        `${newest.file.name} was changed last (${isoFromMs(newest.file.mtimeMs)}) but ${active.file.name} sorts before it and is the network ${who} uses, so the change has no effect: rename ${newest.file.name} to sort first (e.g. 00-${newest.file.name.replace(/^\d+-/, '')}) or remove ${active.file.name}`,
        newest.file.path,
      );
    }
  }
  if (view.defaultNetwork && !active && view.loader === 'ocicni' && eligible.length > 0) {
    add('error', 'default-network-missing', `${who}${where} uses network "${view.defaultNetwork}" (cni_default_network) but no file in ${view.confDir} defines it: pods get no network; fix cni_default_network or the conf's "name"`, view.confDir, view.defaultNetwork);
  }

  return {
    report: {
      ...base,
      confDirExists: true,
      files,
      active: selection.active ? { file: selection.active.file.name, network: activeName } : null,
      loadFailure: selection.loadFailure,
    },
    problems,
  };
}

interface FileContext {
  readonly view: CheckView;
  readonly who: string;
  readonly where: string;
  readonly activeName: string | null;
  readonly failed: boolean;
  readonly reported: ReportedVersions | null;
  add(severity: Severity, code: DoctorProblem['code'], message: string, path?: string | null, network?: string | null): void;
}

function fileProblems(v: FileVerdict, f: FileReport, ctx: FileContext): void {
  const { who, add } = ctx;
  const stops = ctx.view.loader === 'go-cni' || ctx.view.loader === 'libcni';
  const path = v.file.path;
  if (v.file.read && !v.file.read.ok) {
    add('error', v.file.read.why === 'too-large' ? 'conf-too-large' : 'conf-unreadable', `${path}: ${v.file.read.detail}${stops ? `; ${who} stops there and loads no network` : `; ${who} skips it`}`, path);
    return;
  }
  if (v.file.kind === 'other') add('warning', 'conf-not-regular-file', `${path} is not a regular file: runtimes cannot read it as a network config; remove it`, path);
  if (!v.parsed) return;
  if (!v.parsed.ok) {
    const effect = !stops
      ? `${who} skips it`
      : ctx.view.loader === 'libcni'
        ? 'containerd stops at it and loads no network (pods get none), CRI-O skips it'
        : `${who} stops at it and loads no network: pods get no network`;
    add('error', v.parsed.code, `${path}: ${v.parsed.error}; ${effect}; fix the file`, path);
    return;
  }
  const conf = v.parsed;
  const network = conf.name ?? v.file.name;
  const isActive = v.status === 'active';
  if (conf.cniVersion === null) {
    add(isActive ? 'error' : 'warning', 'missing-cni-version', `${path} has no "cniVersion": plugins read it as CNI 0.1.0 (no CHECK, old result format) and newer runtimes refuse it; add "cniVersion": "1.0.0" or the newest its plugins support`, path, network);
  } else if (!isVersion(conf.cniVersion)) {
    add('error', 'bad-cni-version', `${path} has "cniVersion": "${conf.cniVersion}", which is no CNI version: plugins refuse it; use e.g. "1.0.0"`, path, network);
  } else if (compareVersions(conf.cniVersion, '0.4.0') < 0) {
    add('warning', 'old-cni-version', `${path} says "cniVersion": "${conf.cniVersion}": CHECK needs 0.4.0 or newer, so runtimes never check these attachments; raise it to the newest its plugins support`, path, network);
  }
  for (const p of f.plugins) {
    if (p.status === 'missing') {
      add('error', 'plugin-missing', `${path}: plugin "${p.type}" (${p.at}) is in none of ${ctx.view.binDirs.join(', ')}: every ADD on network "${network}" fails with 'failed to find plugin "${p.type}"'; install it there or fix the type`, path, network);
    } else if (p.status === 'not-executable') {
      add('error', 'plugin-not-executable', `${p.path} (${p.at} of ${v.file.name}) is not executable: every ADD on network "${network}" fails with "permission denied"; chmod 755 ${p.path}`, path, network);
    } else if (p.status === 'not-regular-file') {
      add('error', 'plugin-not-regular-file', `${p.path} (${p.at} of ${v.file.name}) is not a regular file, so runtimes cannot run plugin "${p.type}": every ADD on network "${network}" fails; replace it with the plugin binary`, path, network);
    } else if (p.supportedVersions && conf.cniVersion && isVersion(conf.cniVersion) && !p.supportedVersions.includes(conf.cniVersion)) {
      add(
        'error',
        'cni-version-unsupported',
        `${path} says "cniVersion": "${conf.cniVersion}" but ${p.path} reported supporting only ${p.supportedVersions.join(', ')} (recorded VERSION probe): its calls on network "${network}" fail with "incompatible CNI versions"; set "cniVersion" to ${newest(p.supportedVersions)} or upgrade the plugin`,
        path,
        network,
      );
    }
  }
}

function newest(versions: readonly string[]): string {
  return [...versions].filter(isVersion).sort(compareVersions).at(-1) ?? versions.at(-1) ?? '?';
}

function duplicateNames(files: readonly FileVerdict[], add: FileContext['add'], who: string): void {
  const byName = new Map<string, FileVerdict[]>();
  for (const v of files) {
    if (v.status === 'ignored' || v.status === 'not-reached' || !v.parsed?.ok || v.parsed.name === null) continue;
    byName.set(v.parsed.name, [...(byName.get(v.parsed.name) ?? []), v]);
  }
  for (const [name, verdicts] of byName) {
    if (verdicts.length < 2) continue;
    const [used, ...rest] = verdicts as [FileVerdict, ...FileVerdict[]];
    // A copy edited after the file in effect: the usual way an edit ends up with no effect.
    const edited = rest.filter((v) => v.file.mtimeMs > used.file.mtimeMs).sort((a, b) => b.file.mtimeMs - a.file.mtimeMs)[0];
    if (edited) {
      add(
        'warning',
        'shadowed-edit',
        `${edited.file.name} was changed last (${isoFromMs(edited.file.mtimeMs)}) but defines network "${name}" like ${used.file.name}, which sorts before it and is the one ${who} uses, so the change has no effect: make the change in ${used.file.name}, or remove it`,
        edited.file.path,
        name,
      );
      continue;
    }
    const names = verdicts.map((v) => v.file.name);
    add(
      'warning',
      'duplicate-network-name',
      `network name "${name}" is defined by ${names.join(' and ')}: runtimes use the first and ignore the rest, and libcni's cache files (named by network) mix them up; give each file its own "name" or remove the extra one`,
      null,
      name,
    );
  }
}

/**
 * Schemas of the node CNI setup routes: the doctor's report, conf file
 * history and diffs, plugin binaries, a call's setup and GC analyses. Times
 * are ISO 8601, like every other route (the mappers: api/present/node-cni.ts).
 * The CLI (`cnirec doctor`, `cnirec config`) imports the types derived here.
 */

import { z } from 'zod';
import { PROBLEM_CODES } from '../../collector/index.js';
import { component } from './registry.js';

const MAX_PAGE = 1000;

export const problemSchema = component(
  'DoctorProblem',
  z.object({
    code: z.enum(PROBLEM_CODES),
    severity: z.enum(['error', 'warning']).describe('error: pods fail to get network; warning: what is configured is not what takes effect'),
    message: z.string().describe('One line: what is wrong, what it does, what to do'),
    path: z.string().nullable(),
    network: z.string().nullable(),
  }),
);

const runtimeSchema = z.object({
  runtime: z.enum(['containerd', 'cri-o', 'podman', 'kubelet']),
  sources: z.array(z.string()).describe('The config files (or command lines) the paths come from, in the order they apply'),
  confDir: z.string().nullable().describe('Null when this runtime runs no CNI as configured (CRI plugin disabled, netavark)'),
  binDirs: z.array(z.string()),
  loader: z.enum(['go-cni', 'ocicni', 'podman', 'libcni']).describe('How it picks networks out of the conf dir'),
  defaultNetwork: z.string().nullable(),
  maxConfNum: z.number().nullable(),
  extraConfDirs: z.array(z.object({ handler: z.string(), confDir: z.string(), maxConfNum: z.number().nullable() })),
  notes: z.array(z.string()),
});

const pluginCheckSchema = z.object({
  type: z.string(),
  at: z.string().describe('Where the conf names it, e.g. plugins[0].ipam.type'),
  path: z.string().nullable().describe('The binary libcni would run'),
  status: z.enum(['found', 'missing', 'not-executable', 'not-regular-file']),
  supportedVersions: z.array(z.string()).nullable().describe('What its last recorded VERSION probe reported; null when none was recorded'),
});

const fileSchema = z.object({
  name: z.string(),
  path: z.string(),
  status: z.enum(['active', 'loaded', 'skipped', 'not-reached', 'ignored', 'unchecked']),
  why: z.string(),
  network: z.string().nullable(),
  cniVersion: z.string().nullable(),
  sizeBytes: z.number(),
  mtime: z.string(),
  plugins: z.array(pluginCheckSchema),
});

const viewSchema = z.object({
  readBy: z.enum(['containerd', 'cri-o', 'podman', 'kubelet', 'flag', 'default']).describe('flag: --cni-conf-dir; default: nothing known, /etc/cni/net.d'),
  label: z.string(),
  source: z.string().nullable(),
  confDir: z.string(),
  binDirs: z.array(z.string()),
  loader: z.enum(['go-cni', 'ocicni', 'podman', 'libcni']),
  maxConfNum: z.number().nullable(),
  defaultNetwork: z.string().nullable(),
  confDirExists: z.boolean(),
  files: z.array(fileSchema).describe('Every name in the conf dir, in the order runtimes read them'),
  active: z.object({ file: z.string(), network: z.string().nullable() }).nullable().describe("The pod's network"),
  loadFailure: z.string().nullable(),
});

const cniPathSchema = z.object({ value: z.string(), calls: z.number(), lastAt: z.string() });

export const doctorReportSchema = component(
  'NodeCniReport',
  z.object({
    ok: z.boolean().describe('No problem of any severity'),
    generatedAt: z.string(),
    runtimes: z.array(runtimeSchema),
    views: z.array(viewSchema).describe('One per conf dir and reader'),
    problems: z.array(problemSchema),
    record: z.object({ probedPlugins: z.number(), cniPaths: z.array(cniPathSchema) }).nullable().describe("What the daemon's record adds"),
    watchedConfDirs: z.array(z.string()).describe('The conf dirs whose history the daemon records'),
  }),
);

export const recordKnowledgeSchema = component(
  'NodeCniRecord',
  z.object({
    pluginVersions: z.array(z.object({ path: z.string(), supportedVersions: z.array(z.string()), probedAt: z.string() })),
    cniPaths: z.array(cniPathSchema),
  }),
);

export const confVersionSchema = component(
  'ConfVersion',
  z.object({
    id: z.number().int(),
    path: z.string(),
    dir: z.string(),
    kind: z.enum(['file', 'symlink', 'other', 'too-large', 'unreadable']),
    sha256: z.string().nullable().describe('Of the stored bytes: the file\'s own sha256 unless values were redacted'),
    sizeBytes: z.number(),
    fileMtime: z.string(),
    validFrom: z.string().describe('When this version took effect'),
    firstSeen: z.string(),
    supersededAt: z.string().nullable(),
    removedAt: z.string().nullable(),
    network: z.string().nullable(),
    cniVersion: z.string().nullable(),
    parseError: z.string().nullable().describe('Why runtimes would refuse it; null when it loads'),
    types: z.array(z.string()),
    linkTarget: z.string().nullable(),
    redactedPointers: z.array(z.string()),
  }),
);

export const confVersionDetailSchema = confVersionSchema.extend({
  text: z.string().nullable().describe('The file as stored (after redaction), when it is UTF-8 text'),
  base64: z.string().nullable().describe('The stored bytes, base64'),
});

export const confVersionListSchema = z.object({ items: z.array(confVersionSchema) });
export const confDiffSchema = z.object({
  from: confVersionSchema.nullable().describe('Null when `to` is the first version of its file'),
  to: confVersionSchema,
  diff: z.string().describe('Unified diff of the stored bytes'),
});

export const binarySchema = component(
  'PluginBinary',
  z.object({
    id: z.number().int(),
    path: z.string(),
    dev: z.number(),
    inode: z.number(),
    sizeBytes: z.number(),
    mtime: z.string(),
    sha256: z.string().nullable(),
    problem: z.string().nullable(),
    firstSeen: z.string(),
    lastSeen: z.string(),
    calls: z.number(),
    reported: z
      .object({ cniVersion: z.string().nullable(), supportedVersions: z.array(z.string()), callId: z.string(), at: z.string() })
      .nullable()
      .describe('What its last recorded VERSION probe answered'),
  }),
);
export const binaryListSchema = z.object({ items: z.array(binarySchema) });

export const gcSchema = component(
  'GcAnalysis',
  z.object({
    callId: z.string(),
    plugin: z.string(),
    network: z.string().nullable(),
    at: z.string(),
    ok: z.boolean().nullable(),
    validAttachments: z.array(z.object({ containerId: z.string(), ifName: z.string().nullable() })),
    shouldFree: z
      .array(z.object({ containerId: z.string().nullable(), ifName: z.string().nullable(), ip: z.string().nullable(), source: z.enum(['host-local', 'cache']), path: z.string(), held: z.boolean() }))
      .describe("host-local reservations and libcni cache entries of the network at the GC's start that no valid attachment accounts for; held: still there now"),
  }),
);
export const gcListSchema = z.object({ items: z.array(gcSchema) });

export const callSetupSchema = z.object({
  callId: z.string(),
  confVersion: confVersionSchema.nullable().describe('The conf version active for the network named in the call\'s stdin when it started'),
  binary: binarySchema.nullable().describe('The plugin binary it ran'),
  gc: gcSchema.nullable().describe('For a GC call: what it should free'),
});

export const versionsQuerySchema = z.strictObject({
  path: z.string().min(1).max(4096).optional().describe('One conf file'),
  limit: z.coerce.number().int().min(1).max(MAX_PAGE).default(100),
});
export const versionParamsSchema = z.object({ id: z.coerce.number().int().min(1) });
export const diffQuerySchema = z.strictObject({ against: z.coerce.number().int().min(1).optional().describe('The version to compare with (default: the previous version of the same file)') });
export const binariesQuerySchema = z.strictObject({ path: z.string().min(1).max(4096).optional(), limit: z.coerce.number().int().min(1).max(MAX_PAGE).default(100) });
export const gcQuerySchema = z.strictObject({ limit: z.coerce.number().int().min(1).max(100).default(20) });

export type DoctorReportBody = z.input<typeof doctorReportSchema>;
export type ConfVersionBody = z.input<typeof confVersionSchema>;
export type ConfDiffBody = z.input<typeof confDiffSchema>;
export type RecordKnowledgeBody = z.input<typeof recordKnowledgeSchema>;

/**
 * The node's CNI setup: GET /api/v1/node/cni (the doctor's report, with what
 * the record knows), /api/v1/node/cni/record (what the record adds, for
 * `cnirec doctor` reading the files itself), conf file history and diffs,
 * plugin binaries, GC analyses, and GET /api/v1/calls/:id/setup (the conf
 * version and binary a call ran with).
 */

import { createTwoFilesPatch } from 'diff';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { StoredConfVersionWithBytes } from '../../store/index.js';
import type { NodeCniDeps, NodeCniRouteDeps } from '../deps.js';
import { ApiError, apiErrors } from '../errors.js';
import { errorResponses } from '../schemas/error.js';
import {
  binariesQuerySchema,
  binaryListSchema,
  callSetupSchema,
  confDiffSchema,
  confVersionDetailSchema,
  confVersionListSchema,
  diffQuerySchema,
  doctorReportSchema,
  gcListSchema,
  gcQuerySchema,
  recordKnowledgeSchema,
  versionParamsSchema,
  versionsQuerySchema,
} from '../schemas/node-cni.js';
import { presentBinary, presentConfVersion, presentGc, presentRecord, presentReport } from '../present/node-cni.js';
import { isoFromMs } from '../../lib/index.js';

const versionNotFound = (id: number) => new ApiError(404, 'not_found', `No conf file version ${id} is recorded (it may have been deleted by retention).`);

export function registerNodeCni(app: FastifyInstance, deps: NodeCniRouteDeps): void {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const node = (): NodeCniDeps => {
    if (!deps.nodeCni) throw new ApiError(501, 'not_implemented', 'This daemon does not follow the node\'s CNI setup.');
    return deps.nodeCni;
  };
  const tags = ['node'];

  api.get(
    '/api/v1/node/cni',
    { schema: { operationId: 'getNodeCniReport', tags, summary: "The node's CNI setup checked: which conf file is active and why, and every problem, one line each", response: { 200: doctorReportSchema, ...errorResponses(401, 501) } } },
    async () => {
      const r = node().report();
      return presentReport(r, r.watchedConfDirs);
    },
  );

  api.get(
    '/api/v1/node/cni/record',
    { schema: { operationId: 'getNodeCniRecord', tags, summary: 'What the record knows for the checks: versions plugins reported to VERSION probes, CNI_PATH of recent calls', response: { 200: recordKnowledgeSchema, ...errorResponses(401, 501) } } },
    async () => presentRecord(node().record()),
  );

  api.get(
    '/api/v1/node/cni/conf-versions',
    { schema: { operationId: 'listConfVersions', tags, summary: 'Versions of the conf dir files, newest first', querystring: versionsQuerySchema, response: { 200: confVersionListSchema, ...errorResponses(400, 401, 501) } } },
    async (request) => ({ items: node().history.versions({ ...(request.query.path ? { path: request.query.path } : {}), limit: request.query.limit }).map(presentConfVersion) }),
  );

  api.get(
    '/api/v1/node/cni/conf-versions/:id',
    { schema: { operationId: 'getConfVersion', tags, summary: 'One version of a conf file, with its bytes (after redaction)', params: versionParamsSchema, response: { 200: confVersionDetailSchema, ...errorResponses(400, 401, 404, 501) } } },
    async (request) => {
      const v = node().history.version(request.params.id);
      if (!v) throw versionNotFound(request.params.id);
      const text = v.bytes && isUtf8(v.bytes) ? v.bytes.toString('utf8') : null;
      return { ...presentConfVersion(v), text, base64: v.bytes ? v.bytes.toString('base64') : null };
    },
  );

  api.get(
    '/api/v1/node/cni/conf-versions/:id/diff',
    {
      schema: {
        operationId: 'getConfVersionDiff', tags,
        summary: 'A unified diff between a conf file version and the one before it (or `against`)',
        params: versionParamsSchema,
        querystring: diffQuerySchema,
        response: { 200: confDiffSchema, ...errorResponses(400, 401, 404, 501) },
      },
    },
    async (request) => {
      const to = node().history.version(request.params.id);
      if (!to) throw versionNotFound(request.params.id);
      const against = request.query.against;
      const from = against === undefined ? node().history.previousOf(to.id) : node().history.version(against);
      if (against !== undefined && !from) throw versionNotFound(against);
      return { from: from ? presentConfVersion(from) : null, to: presentConfVersion(to), diff: unifiedDiff(from, to) };
    },
  );

  api.get(
    '/api/v1/node/cni/binaries',
    { schema: { operationId: 'listPluginBinaries', tags, summary: 'Plugin binaries calls ran, each version (path, inode, size, mtime, sha256) newest first', querystring: binariesQuerySchema, response: { 200: binaryListSchema, ...errorResponses(400, 401, 501) } } },
    async (request) => ({ items: node().binaries.list({ ...(request.query.path ? { path: request.query.path } : {}), limit: request.query.limit }).map(presentBinary) }),
  );

  api.get(
    '/api/v1/node/cni/gc',
    { schema: { operationId: 'listGcCalls', tags, summary: 'Recent CNI GC calls, each with what it should free (host-local reservations, cache entries)', querystring: gcQuerySchema, response: { 200: gcListSchema, ...errorResponses(400, 401, 501) } } },
    async (request) => ({ items: node().gc.recent(request.query.limit, Date.now()).map(presentGc) }),
  );

  api.get(
    '/api/v1/calls/:id/setup',
    {
      schema: {
        operationId: 'getCallSetup', tags,
        summary: 'The setup a call ran with: the conf version active for its network, the plugin binary, and for a GC what it should free',
        params: callIdParams,
        response: { 200: callSetupSchema, ...errorResponses(400, 401, 404, 501) },
      },
    },
    async (request) => {
      const id = request.params.id;
      if (!deps.store.getCall(id)) throw apiErrors.callNotFound(id);
      const n = node();
      const conf = n.history.versionForCall(id);
      const binary = n.binaries.forCall(id);
      const gc = n.gc.analyse(id, Date.now());
      return { callId: id, confVersion: conf ? presentConfVersion(conf) : null, binary: binary ? presentBinary(binary) : null, gc: gc ? presentGc(gc) : null };
    },
  );
}

const callIdParams = z.object({ id: z.string().min(1).max(128).describe('A call id') });

function unifiedDiff(from: StoredConfVersionWithBytes | null, to: StoredConfVersionWithBytes): string {
  const text = (v: StoredConfVersionWithBytes | null) => (v?.bytes ? v.bytes.toString('utf8') : '');
  const label = (v: StoredConfVersionWithBytes | null) => (v ? `${v.path} (version ${v.id}, ${isoFromMs(v.validFromMs)})` : '/dev/null');
  // jsdiff starts with a line of '=' (an Index: separator): the ---/+++ lines say it all.
  return createTwoFilesPatch(label(from), label(to), text(from), text(to), undefined, undefined, { context: 3 }).replace(/^=+\n/, '');
}

function isUtf8(b: Buffer): boolean {
  return Buffer.from(b.toString('utf8'), 'utf8').equals(b);
}

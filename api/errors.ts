/**
 * Every error the API answers with, in one place: a catalogue of typed
 * errors (status, stable code, a sentence), the translation of anything
 * else that can be thrown (schema validation, the store's bad cursor,
 * fastify's own 4xx) into one of them, and the handlers that turn them into
 * the one error body. A 5xx never shows its cause to the client; the cause
 * is logged with the request it broke.
 */

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { StoreError } from '../store/index.js';
import type { ErrorBody, Issue } from './schemas/error.js';

export type ApiErrorCode =
  | 'bad_request'
  | 'unauthorized'
  | 'not_found'
  | 'method_not_allowed'
  | 'payload_too_large'
  | 'uri_too_long'
  | 'unsupported_media_type'
  | 'internal_error'
  | 'not_implemented'
  | 'mode_switch_failed'
  | 'store_unavailable'
  | 'busy';

export class ApiError extends Error {
  override readonly name = 'ApiError';
  /** Extra response headers (WWW-Authenticate on a 401, Retry-After on a 503). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    readonly status: number,
    readonly code: ApiErrorCode,
    message: string,
    readonly issues?: readonly Issue[],
    options?: { cause?: unknown; headers?: Readonly<Record<string, string>> },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.headers = options?.headers ?? {};
  }

  body(): ErrorBody {
    return { error: { code: this.code, message: this.message, ...(this.issues ? { issues: [...this.issues] } : {}) } };
  }
}

/** Long enough to recognise what was asked, short enough that an abusive URL does not come back whole. */
const MAX_ECHO = 200;
const echo = (text: string) => (text.length > MAX_ECHO ? `${text.slice(0, MAX_ECHO)}…` : text);

const INTERNAL_MESSAGE = 'The daemon failed to answer this request; the details are in its log.';

export const apiErrors = {
  badRequest: (message: string, issues?: readonly Issue[]) => new ApiError(400, 'bad_request', message, issues),
  invalidCursor: (detail: string) =>
    new ApiError(400, 'bad_request', 'Invalid cursor: pass back a nextCursor exactly as it was returned, or start from the first page.', [{ path: 'cursor', message: detail }]),
  unauthorized: () =>
    new ApiError(401, 'unauthorized', 'This daemon requires a token: send the header "Authorization: Bearer <token>".', undefined, {
      headers: { 'www-authenticate': 'Bearer realm="cnirec"' },
    }),
  routeNotFound: (method: string, path: string) => new ApiError(404, 'not_found', `No route ${method} ${echo(path)}; the routes are listed at /api/v1/openapi.json.`),
  callNotFound: (id: string) => new ApiError(404, 'not_found', `No call with id "${echo(id)}" is recorded (it may never have existed, or be from another node).`),
  podNotFound: (namespace: string, name: string, scoped = false) =>
    new ApiError(404, 'not_found', `No calls are recorded for pod ${echo(namespace)}/${echo(name)}${scoped ? ' within the podUid, since and until asked for' : ''}.`),
  modeSwitchUnsupported: () => new ApiError(501, 'not_implemented', 'This daemon cannot switch the capture mode at runtime; restart it with --capture instead.'),
  nothingRecords: () => new ApiError(501, 'not_implemented', 'This is a bundle opened with `cnirec open`: nothing records here, so there is no capture mode to switch.'),
  noGcPlanInBundle: (node: string, takenAt: string) =>
    new ApiError(
      501,
      'not_implemented',
      `This is a bundle of node ${echo(node)} taken at ${echo(takenAt)}, not a live node, and its daemon did not answer then, so no GC plan was recorded: \`cnirec gc\` on the node lists what a GC would free.`,
    ),
  modeSwitchFailed: (cause: unknown) =>
    new ApiError(500, 'mode_switch_failed', 'Switching the capture mode failed; GET /api/v1/tracer shows the tracer’s lastError, the daemon log the details.', undefined, { cause }),
  storeUnavailable: (cause: unknown) => new ApiError(503, 'store_unavailable', 'The call database is busy or unavailable right now; try again shortly.', undefined, { cause, headers: { 'retry-after': '1' } }),
  internal: (cause: unknown) => new ApiError(500, 'internal_error', INTERNAL_MESSAGE, undefined, { cause }),
} as const;

/** What fastify puts on a schema validation error (fastify-type-provider-zod fills `validation` from zod's issues). */
interface ValidationFailure {
  readonly validation: ReadonlyArray<{ readonly instancePath?: string; readonly keyword?: string; readonly message?: string; readonly params?: Record<string, unknown> }>;
  readonly validationContext?: string;
}

const CONTEXT_LABEL: Readonly<Record<string, string>> = { querystring: 'query', params: 'path', body: 'body', headers: 'headers' };

const CLIENT_ERROR_CODES: Readonly<Record<number, ApiErrorCode>> = {
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
};

/** Any thrown value → the ApiError the client gets. Never throws. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (isValidationFailure(err)) return fromValidation(err);
  if (err instanceof StoreError) {
    if (err.code === 'invalid-cursor') return apiErrors.invalidCursor(err.message);
    if (err.code === 'busy' || err.code === 'io') return apiErrors.storeUnavailable(err);
    return apiErrors.internal(err);
  }
  // fastify's own request errors (bad JSON, wrong content type, body too large) say what the client did wrong.
  const status = statusOf(err);
  if (status !== null && status >= 400 && status < 500) {
    const message = err instanceof Error && err.message ? err.message : 'Bad request';
    return new ApiError(status, CLIENT_ERROR_CODES[status] ?? 'bad_request', message);
  }
  return apiErrors.internal(err);
}

function isValidationFailure(err: unknown): err is ValidationFailure {
  return typeof err === 'object' && err !== null && Array.isArray((err as { validation?: unknown }).validation);
}

function statusOf(err: unknown): number | null {
  if (typeof err !== 'object' || err === null) return null;
  const status = (err as { statusCode?: unknown }).statusCode;
  return typeof status === 'number' && Number.isInteger(status) ? status : null;
}

/** Zod issues (via fastify) → one issue per offending field, and a message that names them too. */
export function fromValidation(err: ValidationFailure): ApiError {
  const issues: Issue[] = [];
  for (const v of err.validation) {
    const path = (v.instancePath ?? '').split('/').filter(Boolean).join('.');
    const unknownKeys = v.keyword === 'unrecognized_keys' && Array.isArray(v.params?.keys) ? (v.params.keys as unknown[]) : null;
    if (unknownKeys) {
      for (const key of unknownKeys) issues.push({ path: path ? `${path}.${String(key)}` : String(key), message: 'Unknown field' });
    } else {
      issues.push({ path, message: v.message ?? 'Invalid value' });
    }
  }
  const where = CONTEXT_LABEL[err.validationContext ?? ''] ?? 'request';
  const summary = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ');
  return apiErrors.badRequest(`Invalid ${where}: ${summary}`, issues);
}

export function sendApiError(error: ApiError, reply: FastifyReply): FastifyReply {
  return reply.code(error.status).headers(error.headers).send(error.body());
}

/** Installs the one error handler and the 404 for unknown routes; call before registering routes. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err, request, reply) => {
    const apiError = toApiError(err);
    if (apiError.status >= 500) {
      request.log.error({ err, request: requestContext(request), code: apiError.code }, 'request failed');
    } else {
      request.log.debug({ request: requestContext(request), code: apiError.code, reason: apiError.message }, 'request refused');
    }
    return sendApiError(apiError, reply);
  });

  app.setNotFoundHandler((request, reply) => sendApiError(apiErrors.routeNotFound(request.method, request.url.split('?')[0] ?? '/'), reply));
}

/**
 * For fastify's `frameworkErrors` option: errors the router raises before a
 * route is found (a parameter over maxParamLength, broken percent-encoding),
 * which never reach the error handler.
 */
export function answerFrameworkError(err: unknown, _request: FastifyRequest, reply: FastifyReply): void {
  void sendApiError(toApiError(err), reply);
}

/** What identifies a request in the log. Headers are left out on purpose: they carry the bearer token. */
function requestContext(request: FastifyRequest) {
  return { id: request.id, method: request.method, url: request.url, route: request.routeOptions.url ?? null };
}

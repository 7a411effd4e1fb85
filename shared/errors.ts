/**
 * Error classes with their HTTP meaning, mapped in one table and rendered as RFC 9457 problem+json
 * by one middleware (api/middleware/problem.ts). Domain code throws these; it never sets statuses.
 */

export interface FieldError {
  /** Dotted path of the offending field, prefixed with its location: body.email, query.limit, params.id. */
  path: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    message: string,
    readonly errors: FieldError[] = [],
    /** Extra members of the problem document (e.g. allowed_next_states). */
    readonly extensions: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class ValidationError extends AppError {}
export class UnauthorizedError extends AppError {}
export class ForbiddenError extends AppError {}
export class NotFoundError extends AppError {}
export class ConflictError extends AppError {}
export class PayloadTooLargeError extends AppError {}
export class UnsupportedMediaTypeError extends AppError {}
/** A dependency (Redis, PostgreSQL) is unavailable: 503 with Retry-After, logged once per outage rather than per request. */
export class MethodNotAllowedError extends AppError {}
export class ServiceUnavailableError extends AppError {}
/** A client over a limit; `retryAfterSeconds` becomes the Retry-After header. */
export class TooManyRequestsError extends AppError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message, [], { retry_after_seconds: retryAfterSeconds });
  }
}
/** Readiness probe failed: a dependency is down or migrations are pending. */
export class NotReadyError extends ServiceUnavailableError {}
export class UpstreamError extends AppError {}
/** A tool's result exceeded the gateway's size limit (TOOL_RESULT_MAX_BYTES). */
export class ToolResultTooLargeError extends UpstreamError {}
/** A call did not finish within its time limit (e.g. TOOL_CALL_TIMEOUT_MS). */
export class GatewayTimeoutError extends AppError {}

interface ProblemKind {
  status: number;
  title: string;
  /** Last segment of the problem type URI. */
  slug: string;
  /** Seconds after which the client may retry (sent as Retry-After). */
  retryAfterSeconds?: number;
}

/** The one table from error class to HTTP status and problem type. */
export const problemKinds = new Map<Function, ProblemKind>([
  [ValidationError, { status: 400, title: 'Bad Request', slug: 'validation' }],
  [UnauthorizedError, { status: 401, title: 'Unauthorized', slug: 'unauthorized' }],
  [ForbiddenError, { status: 403, title: 'Forbidden', slug: 'forbidden' }],
  [NotFoundError, { status: 404, title: 'Not Found', slug: 'not-found' }],
  [ConflictError, { status: 409, title: 'Conflict', slug: 'conflict' }],
  [PayloadTooLargeError, { status: 413, title: 'Payload Too Large', slug: 'payload-too-large' }],
  [MethodNotAllowedError, { status: 405, title: 'Method Not Allowed', slug: 'method-not-allowed' }],
  [UnsupportedMediaTypeError, { status: 415, title: 'Unsupported Media Type', slug: 'unsupported-media-type' }],
  [TooManyRequestsError, { status: 429, title: 'Too Many Requests', slug: 'too-many-requests' }],
  [UpstreamError, { status: 502, title: 'Bad Gateway', slug: 'upstream' }],
  [ToolResultTooLargeError, { status: 502, title: 'Bad Gateway', slug: 'tool-result-too-large' }],
  [GatewayTimeoutError, { status: 504, title: 'Gateway Timeout', slug: 'timeout' }],
  [ServiceUnavailableError, { status: 503, title: 'Service Unavailable', slug: 'unavailable', retryAfterSeconds: 2 }],
  [NotReadyError, { status: 503, title: 'Service Unavailable', slug: 'not-ready' }],
]);

const internal: ProblemKind = { status: 500, title: 'Internal Server Error', slug: 'internal' };

/** The problem kind of an error class (walking up its prototype chain), or the 500 kind. */
export function problemKindOf(error: unknown): ProblemKind {
  let proto = error instanceof AppError ? Object.getPrototypeOf(error) : null;
  while (proto && proto !== AppError.prototype) {
    const kind = problemKinds.get(proto.constructor);
    if (kind) return kind;
    proto = Object.getPrototypeOf(proto);
  }
  return internal;
}

/** The first kind of the table with a status (client errors raised by Koa's own stack carry only a status). */
export function problemKindOfStatus(status: number): ProblemKind {
  for (const kind of problemKinds.values()) if (kind.status === status) return kind;
  return { status, title: 'Bad Request', slug: 'bad-request' };
}

export const problemTypeBase = 'https://switchboard.dev/problems/';

/** Turns a zod error into field errors located in part of a request ("body", "query", ...). */
export function fieldErrors(location: string, issues: ReadonlyArray<{ path: PropertyKey[]; message: string; code?: string; keys?: string[] }>): FieldError[] {
  const at = (path: PropertyKey[]) => [location, ...path.map(String)].filter(Boolean).join('.');
  // An unknown key is named by its own path (query.search), one error each, rather than the object's.
  return issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys' && issue.keys?.length
      ? issue.keys.map((key) => ({ path: at([...issue.path, key]), message: location === 'query' ? 'unknown query parameter' : 'unknown field' }))
      : [{ path: at(issue.path), message: issue.message }],
  );
}

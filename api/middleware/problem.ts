import type { Middleware, Context } from 'koa';
import { AppError, NotFoundError, ServiceUnavailableError, TooManyRequestsError, problemKindOf, problemKindOfStatus, problemTypeBase, type FieldError } from '../../shared/errors.js';
import { dependencyFailed, outageInProgress, unavailableDependency } from '../../shared/outages.js';

/** Writes an RFC 9457 problem document. */
function sendProblem(
  ctx: Context,
  status: number,
  title: string,
  slug: string,
  detail: string,
  errors?: FieldError[],
  extensions: Record<string, unknown> = {},
) {
  ctx.status = status;
  ctx.type = 'application/problem+json';
  // Extensions first: a member named like a standard one (a record's `status`) must not replace the HTTP status.
  ctx.body = {
    ...extensions,
    type: problemTypeBase + slug,
    title,
    status,
    detail,
    ...(errors?.length ? { errors } : {}),
    request_id: ctx.state.requestId,
  };
}

/** Errors raised by Koa's own stack (body parser, http-errors) carry a status and an expose flag. */
interface HttpishError extends Error {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  type?: string;
}

const bodyParserDetails: Record<string, string> = {
  'entity.too.large': 'The request body is larger than the service accepts.',
  'entity.parse.failed': 'The request body is not valid JSON.',
  'encoding.unsupported': 'The request body uses an unsupported content encoding.',
  'charset.unsupported': 'The request body uses an unsupported charset.',
};
/** The one error middleware: AppError subclasses by the error table; client errors from Koa by their status; anything else is a logged 500. */
export function problems(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        const kind = problemKindOf(new NotFoundError(''));
        sendProblem(ctx, kind.status, kind.title, kind.slug, `No route ${ctx.method} ${ctx.path}.`);
      }
    } catch (err) {
      const dependency = unavailableDependency(err);
      if (dependency) {
        // One log line per outage (shared/outages.ts), not a stack trace per request.
        dependencyFailed(dependency, err);
        err = new ServiceUnavailableError(`The service cannot reach its ${dependency === 'redis' ? 'message bus' : 'database'} right now; retry shortly.`);
      }
      if (err instanceof AppError) {
        const kind = problemKindOf(err);
        if (kind.status >= 500 && !(err instanceof ServiceUnavailableError)) ctx.state.log?.error({ err }, 'request failed');
        if (err instanceof TooManyRequestsError) ctx.set('Retry-After', String(err.retryAfterSeconds));
        else if (kind.retryAfterSeconds) ctx.set('Retry-After', String(kind.retryAfterSeconds));
        sendProblem(ctx, kind.status, kind.title, kind.slug, err.message, err.errors, err.extensions);
        return;
      }
      const e = err as HttpishError;
      const status = e.status ?? e.statusCode;
      if (status && status >= 400 && status < 500) {
        const { title, slug } = problemKindOfStatus(status);
        const type = e instanceof SyntaxError ? 'entity.parse.failed' : e.type;
        const detail = (type && bodyParserDetails[type]) || (e.expose ? e.message : title);
        sendProblem(ctx, status, title, slug, detail);
        return;
      }
      ctx.state.log?.error({ err }, 'unhandled error');
      const kind = problemKindOf(err);
      sendProblem(ctx, kind.status, kind.title, kind.slug, 'The service failed to handle the request; it has been logged.');
    }
  };
}

/**
 * While a dependency is failing (shared/outages.ts), a request still unanswered after `ms` is
 * answered 503 with Retry-After: a request that found a pooled connection late, or queued behind
 * others, would otherwise add one bounded wait to the next and keep its client waiting past 2 s.
 * Outside outages nothing changes (routes that wait by design, such as the lead batch webhook,
 * keep their own limits). A stream already under way is left alone.
 */
export function outageDeadline(ms: number): Middleware {
  return async (ctx, next) => {
    let timer: NodeJS.Timeout | undefined;
    const work = next();
    const late = new Promise<typeof lateMark>((resolve) => {
      const check = () => (outageInProgress() ? resolve(lateMark) : (timer = setTimeout(check, 200)));
      timer = setTimeout(check, ms);
    });
    try {
      if ((await Promise.race([work, late])) !== lateMark || ctx.res.headersSent || ctx.respond === false) return await work;
      // The abandoned work may still fail; its outcome no longer has a client.
      work.catch(() => undefined);
      throw new ServiceUnavailableError('A dependency of the service is failing; retry shortly.');
    } finally {
      clearTimeout(timer);
    }
  };
}
const lateMark = Symbol('late');

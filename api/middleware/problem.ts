import type { Middleware, Context } from 'koa';
import { AppError, NotFoundError, TooManyRequestsError, problemKindOf, problemKindOfStatus, problemTypeBase, type FieldError } from '../../shared/errors.js';

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
  ctx.body = {
    type: problemTypeBase + slug,
    title,
    status,
    detail,
    ...(errors?.length ? { errors } : {}),
    ...extensions,
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
      if (err instanceof AppError) {
        const kind = problemKindOf(err);
        if (kind.status >= 500) ctx.state.log?.error({ err }, 'request failed');
        if (err instanceof TooManyRequestsError) ctx.set('Retry-After', String(err.retryAfterSeconds));
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

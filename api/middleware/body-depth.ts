/**
 * Bodies nested deeper than MAX_JSON_DEPTH are refused right after the body parser, for every route,
 * before anything walks them recursively: V8's JSON.parse does not recurse, but zod, JSON.stringify
 * (queueing a job) and the value checks do, and a body nested ~20,000 levels deep overflows the stack.
 * A scan of the raw text is the cheap test; the field named comes from a walk of the parsed value
 * that stops at the limit.
 */
import type { Middleware } from 'koa';
import { ValidationError } from '../../shared/errors.js';
import { jsonNestsDeeper, unstorableFields } from '../../shared/storable.js';

export function refuseDeepBodies(maxDepth: number): Middleware {
  return async (ctx, next) => {
    const raw = (ctx.request as { rawBody?: unknown }).rawBody;
    if (typeof raw === 'string' && jsonNestsDeeper(raw, maxDepth)) {
      const errors = unstorableFields((ctx.request as { body?: unknown }).body, 'body', maxDepth);
      if (errors.length) throw new ValidationError(`The request is invalid: ${errors.map((e) => e.path).join(', ')}.`, errors);
    }
    await next();
  };
}

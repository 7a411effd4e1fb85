/**
 * Routes are declared once, with their zod schemas, and that one declaration both serves the
 * request (auth, validation, handler) and documents it in the OpenAPI registry. A route that
 * exists is therefore always in /api/openapi.json, with its auth and error responses.
 */
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { OpenAPIRegistry, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from '../shared/zod.js';
import { ValidationError, fieldErrors, type FieldError } from '../shared/errors.js';
import { config } from '../shared/config.js';
import { rawTextStorable, unstorableFields } from '../shared/storable.js';
import { requireCaller } from './middleware/auth.js';
import { readMultipart, type MultipartLimits, type UploadedFile } from './middleware/multipart.js';
import { csrfHeader, sessionCookie } from './auth/browser-session.js';
import { scopeDescriptions, scopeForPath, type Scope } from '../shared/auth/scopes.js';
import type { Role } from '../shared/auth/roles.js';

/**
 * Who may call a route, named for what it admits. A key needs the route's scope (`scope`, default
 * the scope of its path); browser sessions send unsafe methods with the X-CSRF-Token header.
 * - `key-or-sre`: an API key, or a browser session with role `sre` (the SRE API and the platform's service routes).
 * - `key-or-staff`: an API key, or a session with role `staff`.
 * - `key-or-sales-or-sre`: an API key, or a session with role `sales` or `sre` (the CRM).
 * - `key-or-person`: an API key, or any signed-in person.
 * - `person`: a signed-in person only (their own account: /me).
 * - `public`: anyone.
 */
export type Auth = 'key-or-sre' | 'key-or-staff' | 'key-or-sales-or-sre' | 'key-or-person' | 'person' | 'public';

/** The session roles each kind of caller admits (undefined: any signed-in person), and whether a key is accepted. */
const admits: Record<Exclude<Auth, 'public'>, { apiKey: boolean; roles?: Role[] }> = {
  'key-or-sre': { apiKey: true, roles: ['sre'] },
  'key-or-staff': { apiKey: true, roles: ['staff'] },
  'key-or-sales-or-sre': { apiKey: true, roles: ['sales', 'sre'] },
  'key-or-person': { apiKey: true },
  person: { apiKey: false },
};

/** The sentence the API reference gives each route about who may call it. */
function admitsSentence(auth: Auth, scope: Scope | 'any'): string {
  if (auth === 'public') return 'Open to anyone.';
  const { apiKey, roles } = admits[auth];
  const person = roles ? `a signed-in person with role ${roles.map((r) => `\`${r}\``).join(' or ')}` : 'any signed-in person';
  if (!apiKey) return `Admits ${person} (no API key).`;
  return `Admits an API key${scope === 'any' ? '' : ` with scope \`${scope}\``}, or ${person}.`;
}

type AnyObject = z.ZodObject<z.ZodRawShape>;
type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  /** Defaults to application/json. */
  contentType?: string;
}

type Responses = Record<number, ResponseSpec>;
/**
 * What a handler may return: the input of one of its declared success schemas (a union when there are
 * several), so the reference cannot drift from what is sent; undefined when the handler wrote the
 * response itself (streams, empty bodies).
 */
export type Reply<R extends Responses> = { [K in keyof R]: R[K] extends { schema: infer S extends z.ZodType } ? z.input<S> : never }[keyof R];

export interface RouteSpec<
  P extends AnyObject | undefined,
  Q extends AnyObject | undefined,
  B extends z.ZodType | undefined,
  H extends AnyObject | undefined,
  R extends Responses = Responses,
  M extends AnyObject | undefined = undefined,
> {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI path template, e.g. /api/sessions/{session_id}. */
  path: string;
  tags: string[];
  summary: string;
  /** Markdown; record the decisions the spec leaves open ("not shown") here. */
  description?: string;
  auth: Auth;
  /** Scope an API key needs (shared/auth/scopes.ts); default: the scope of the route's path prefix. */
  scope?: Scope | 'any';
  request?: {
    params?: P;
    query?: Q;
    body?: B;
    headers?: H;
    /** Media type of the body, application/json unless stated. */
    bodyType?: 'application/json' | 'application/x-www-form-urlencoded';
    /**
     * A hand-written check run before the body schema on hot routes: true only for bodies the schema
     * accepts and returns unchanged, which are then taken as they are; anything else goes through the
     * schema (and its field errors). It saves walking and copying every field of a large body twice.
     */
    acceptsBody?: (body: unknown) => boolean;
    /**
     * A multipart/form-data body instead of `body`: one file part and the text fields `fields`
     * (documented as the form, with the file as binary); the handler gets `upload: {file, fields}`.
     */
    multipart?: MultipartLimits & { fields: M };
  };
  /** Middleware run after validation and the router's `beforeHandler`, before a multipart body is read and the handler runs (e.g. limits checked before an upload is read). */
  use?: Middleware[];
  /** Success responses by status. */
  responses: R;
  /** Error statuses this route produces beyond the automatic ones (400, 401, 404, 413), with their meaning. */
  errors?: Record<number, string>;
  handler: (input: { params: Out<P>; query: Out<Q>; body: Out<B>; headers: Out<H>; upload: M extends AnyObject ? { file: UploadedFile; fields: z.output<M> } : undefined }, ctx: Context) => Promise<NoInfer<Reply<R>> | void> | NoInfer<Reply<R>> | void;
}

export const problemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    request_id: z.string(),
  })
  .openapi('Problem', { description: 'RFC 9457 problem details' });

/** Said of every route that takes input: what shared/storable.ts refuses before any schema or handler runs. */
const unstorableMeaning =
  'Always refused, whatever the route, because PostgreSQL cannot store it (nothing is queued or stored): a string or key holding a NUL character (U+0000) or a lone UTF-16 surrogate (e.g. `\\ud800` without its pair), and objects or arrays nested deeper than MAX_JSON_DEPTH (default 64) levels; `errors` names the field';

const defaultErrorMeaning: Record<number, string> = {
  400: 'Invalid input; `errors` names each bad field',
  401: 'Missing or invalid credentials',
  403: 'The signed-in person lacks the role, or a browser request failed the CSRF check',
  404: 'Unknown resource',
  413: 'Request body too large',
};

/** The OpenAPI registry every route writes into. */
export const openapi = new OpenAPIRegistry();
openapi.register('Problem', problemSchema);
const scopesNote = [
  'A key of API_KEYS has full access; a named key (POST /api/v1/keys) only its scopes, listed on each route as the scopes of this requirement:',
  ...Object.entries(scopeDescriptions).map(([scope, meaning]) => `\`${scope}\`: ${meaning}`),
  'A key without the scope a route needs gets 403 naming it (`required_scope`).',
].join('\n- ');
openapi.registerComponent('securitySchemes', 'ApiKey', { type: 'apiKey', in: 'header', name: 'X-API-Key', description: scopesNote });
openapi.registerComponent('securitySchemes', 'Bearer', { type: 'http', scheme: 'bearer', description: 'The same API key as a bearer token (same scopes)' });
openapi.registerComponent('securitySchemes', 'Session', {
  type: 'apiKey',
  in: 'cookie',
  name: sessionCookie,
  description: `Browser session after OpenID Connect sign-in (GET /api/global/auth/login). Routes need a role: the SRE API and service routes \`sre\`, the CRM \`sales\` or \`sre\`. POST, PUT, PATCH and DELETE also need the header ${csrfHeader} with the csrf_token of GET /api/global/auth/me; cross-site requests are refused (403).`,
});

/** The security requirement of a route: keys with the scope it needs (OpenAPI lists it), or a session. */
function securityOf(auth: Auth, scope: Scope | 'any'): RouteConfig['security'] {
  const scopes = scope === 'any' ? [] : [scope];
  if (auth === 'public') return [];
  return admits[auth].apiKey ? [{ ApiKey: scopes }, { Bearer: scopes }, { Session: [] }] : [{ Session: [] }];
}

function authMiddleware(auth: Auth, scope: Scope | 'any'): Middleware | undefined {
  if (auth === 'public') return undefined;
  const { apiKey, roles } = admits[auth];
  return apiKey ? requireCaller({ apiKey, role: roles, scope }) : requireCaller({ apiKey });
}

/**
 * Parses one part of the request; collects its field errors instead of throwing. What PostgreSQL
 * could not store is refused first, for every route at once (shared/storable.ts); the body's raw
 * text, when it shows nothing of the kind, spares walking every field. `fast` may accept the value
 * as it is (see RouteSpec.request.acceptsBody).
 */
function parsePart(schema: z.ZodType | undefined, value: unknown, location: string, errors: FieldError[], raw?: unknown, fast?: (value: unknown) => boolean) {
  if (!schema) return undefined;
  // Nesting of a raw body was checked by the body middleware (refuseDeepBodies) before anything walked it.
  const unstorable = rawTextStorable(raw) ? [] : unstorableFields(value, location, config().input.maxJsonDepth);
  if (unstorable.length) {
    errors.push(...unstorable);
    return undefined;
  }
  if (fast?.(value)) return value;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  errors.push(...fieldErrors(location, result.error.issues));
  return undefined;
}

const noQuery = z.object({}).strict();
/** The object schema refusing unknown keys (a schema that is not a plain object is left as it is). */
const strictObject = (schema: z.ZodType): z.ZodType => (schema instanceof z.ZodObject ? schema.strict() : schema);

function documentRoute(spec: Omit<RouteSpec<any, any, any, any, any, any>, 'handler'>) {
  const responses: RouteConfig['responses'] = {};
  for (const [status, r] of Object.entries(spec.responses as Responses)) {
    responses[status] = {
      description: r.description,
      ...(r.schema ? { content: { [r.contentType ?? 'application/json']: { schema: r.schema } } } : {}),
    };
  }
  const errors: Record<number, string> = { ...spec.errors };
  const hasInput = spec.request && Object.values(spec.request).some((v) => v && typeof v === 'object');
  if (hasInput) errors[400] = `${errors[400] ?? defaultErrorMeaning[400]!}. ${unstorableMeaning}.`;
  if (spec.auth !== 'public') errors[401] ??= defaultErrorMeaning[401]!;
  if (spec.auth !== 'public') errors[403] ??= defaultErrorMeaning[403]!;
  if (spec.request?.params) errors[404] ??= defaultErrorMeaning[404]!;
  if (spec.request?.body || spec.request?.multipart) errors[413] ??= defaultErrorMeaning[413]!;
  const multipart = spec.request?.multipart;
  for (const [status, description] of Object.entries(errors)) {
    responses[status] = { description, content: { 'application/problem+json': { schema: problemSchema } } };
  }
  openapi.registerPath({
    method: spec.method,
    path: spec.path,
    tags: spec.tags,
    summary: spec.summary,
    description: [spec.description, admitsSentence(spec.auth, spec.scope ?? scopeForPath(spec.path))].filter(Boolean).join('\n\n'),
    security: securityOf(spec.auth, spec.scope ?? scopeForPath(spec.path)),
    request: {
      params: spec.request?.params,
      query: spec.request?.query,
      headers: spec.request?.headers,
      ...(spec.request?.body
        ? { body: { required: true, content: { [spec.request.bodyType ?? 'application/json']: { schema: spec.request.body } } } }
        : {}),
      ...(multipart
        ? {
            body: {
              required: true,
              content: { 'multipart/form-data': { schema: multipart.fields.extend({ [multipart.file]: z.string().openapi({ format: 'binary', description: 'the file' }) }) } },
            },
          }
        : {}),
    },
    responses,
  });
}

export interface RouterOptions {
  /** Middleware run before every route of this router, ahead of auth and validation (e.g. a feature gate). */
  use?: Middleware[];
  /** Middleware run on every route of this router once the request is authenticated and valid, before its handler (e.g. resolving whom a portal request acts for). */
  beforeHandler?: Middleware[];
  /** Error responses every route of this router can give (a route's own `errors` override them). */
  errors?: Record<number, string>;
}

/**
 * The start of a route's path up to its first parameter, wildcard or optional group, lower-cased
 * (routes match case-insensitively): a request path that does not begin with it cannot match the route.
 */
function literalStart(koaPath: string): string {
  const param = koaPath.search(/[:(*{]/);
  return (param < 0 ? koaPath : koaPath.slice(0, param)).toLowerCase();
}

/** A domain's router: `route()` serves a route and documents it. */
export class ApiRouter {
  readonly koa = new Router();
  /** The literal starts of this router's routes (see routersMiddleware). */
  readonly pathStarts = new Set<string>();

  constructor(private readonly options: RouterOptions = {}) {
    for (const middleware of options.use ?? []) this.koa.use(middleware);
  }

  route<
    R extends Responses,
    P extends AnyObject | undefined = undefined,
    Q extends AnyObject | undefined = undefined,
    B extends z.ZodType | undefined = undefined,
    H extends AnyObject | undefined = undefined,
    M extends AnyObject | undefined = undefined,
  >(spec: RouteSpec<P, Q, B, H, R, M>): this {
    documentRoute({ ...spec, errors: { ...this.options.errors, ...spec.errors } });
    const koaPath = spec.path.replace(/\{(\w+)\}/g, ':$1');
    const successStatus = Number(Object.keys(spec.responses)[0] ?? 200);
    // Query parameters a route does not know are refused (400 naming each), never ignored: a mistyped
    // filter must not turn into "everything". A GET route without query parameters accepts none.
    const querySchema = spec.request?.query ? strictObject(spec.request.query) : spec.method === 'get' ? noQuery : undefined;
    const middleware: Middleware[] = [];
    const auth = authMiddleware(spec.auth, spec.scope ?? scopeForPath(spec.path));
    if (auth) middleware.push(auth);
    const multipart = spec.request?.multipart;
    type Input = Parameters<typeof spec.handler>[0];
    middleware.push(async (ctx, next) => {
      const errors: FieldError[] = [];
      const input = {
        params: parsePart(spec.request?.params, ctx.params, 'params', errors),
        query: parsePart(querySchema, ctx.query, 'query', errors),
        headers: parsePart(spec.request?.headers, ctx.headers, 'headers', errors),
        body: parsePart(
          spec.request?.body,
          (ctx.request as { body?: unknown }).body ?? (spec.request?.body ? undefined : {}),
          'body',
          errors,
          (ctx.request as { rawBody?: unknown }).rawBody,
          spec.request?.acceptsBody,
        ),
      } as Input;
      if (errors.length) throw new ValidationError(`The request is invalid: ${errors.map((e) => e.path).join(', ')}.`, errors);
      ctx.state.routeInput = input;
      await next();
    });
    // The router's and the route's own middleware see a valid request; a multipart body is read after them.
    middleware.push(...(this.options.beforeHandler ?? []), ...(spec.use ?? []));
    middleware.push(async (ctx) => {
      const input = ctx.state.routeInput as Input;
      if (multipart) {
        const upload = await readMultipart(ctx, multipart);
        const errors: FieldError[] = [];
        const fields = parsePart(multipart.fields, upload.fields, 'body', errors);
        if (errors.length) throw new ValidationError(`The request is invalid: ${errors.map((e) => e.path).join(', ')}.`, errors);
        (input as { upload: unknown }).upload = { file: upload.file, fields };
      }
      const result = await spec.handler(input, ctx);
      if (result !== undefined) {
        if (ctx.status === 404 && ctx.body === undefined) ctx.status = successStatus;
        ctx.body = result;
      }
    });
    this.koa[spec.method](koaPath, ...middleware);
    this.pathStarts.add(literalStart(koaPath));
    return this;
  }
}

/**
 * Every router as one middleware, in order, run only for requests whose path begins with the literal
 * start of one of its routes. Mounted one after another, each @koa/router middleware parses the
 * Host header (for its host option, even unset) and tests its routes' patterns on every request,
 * so a request went through about 40 router middlewares before its own. A skipped router could not
 * have matched, so what runs is what would have matched. Allowed-methods answers (405, OPTIONS, 501)
 * need one handler over the routes matched by all routers (ctx.matched): it is the outer one here.
 */
export function routersMiddleware(routers: readonly ApiRouter[]): Middleware[] {
  const mounted = routers.map((router) => ({ starts: [...router.pathStarts], routes: router.koa.routes() as Middleware }));
  const dispatch: Middleware = (ctx, next) => {
    const path = ctx.path.toLowerCase();
    // As if a router had run and matched nothing, so an unimplemented method still gets its 501.
    (ctx as { matched?: unknown[] }).matched ??= [];
    const from = (i: number): Promise<unknown> => {
      for (; i < mounted.length; i++) {
        const { starts, routes } = mounted[i]!;
        if (starts.some((start) => path.startsWith(start))) return routes(ctx, () => from(i + 1));
      }
      return next();
    };
    return from(0);
  };
  return [new Router().allowedMethods() as Middleware, dispatch];
}

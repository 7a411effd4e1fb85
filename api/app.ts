/** The Koa application: middleware order and every domain's router. */
import Koa from 'koa';
import { bodyParser } from '@koa/bodyparser';
import { config } from '../shared/config.js';
import { logger } from '../shared/logger.js';
import { httpDuration, registerQueueGauges } from '../shared/metrics.js';
import { allQueues } from '../shared/queues.js';
import { requestId } from './middleware/request-id.js';
import { canonicalPath } from './middleware/canonical-path.js';
import { clientAddress, koaProxyOptions } from './middleware/client-address.js';
import { securityHeaders } from './middleware/security-headers.js';
import { outageDeadline, problems } from './middleware/problem.js';
import { refuseDeepBodies } from './middleware/body-depth.js';
import { docsRouter } from './openapi.js';
import { mountQueueDashboard } from './platform/queue-dashboard.js';
import { defaultWebMode, mountWebApp, type WebMode } from './platform/web-app.js';
import type http from 'node:http';
import { healthRoutes } from './platform/health.routes.js';
import { toolRoutes } from './platform/tools.routes.js';
import { keyRoutes } from './platform/keys.routes.js';
import { crmRouters } from './crm/index.js';
import { sessionRoutes } from './sessions/sessions.routes.js';
import { streamRoutes } from './stream/stream.routes.js';
import { userRoutes } from './users/users.routes.js';
import { chatappRoutes } from './channels/chatapp.routes.js';
import { channelRoutes } from './channels/index.js';
import { routersMiddleware, type ApiRouter } from './routing.js';
import { sreRouters } from './sre/index.js';
import { authRoutes } from './auth/auth.routes.js';
import { portalRouters } from './portal/index.js';

/** Every domain's routes, in one list. */
export function domainRouters(): ApiRouter[] {
  return [
    healthRoutes(),
    authRoutes(),
    toolRoutes(),
    keyRoutes(),
    ...crmRouters(),
    sessionRoutes(),
    streamRoutes(),
    userRoutes(),
    chatappRoutes(),
    channelRoutes(),
    ...sreRouters(),
    ...portalRouters(),
  ];
}

let gaugesRegistered = false;

export interface AppOptions {
  /** How the browser app is served (default: built when compiled, Vite when run from source). */
  web?: WebMode;
  /** The HTTP server, for Vite's hot reload. */
  server?: http.Server;
  /** The built app's folder when not dist/web (tests). */
  webDir?: string;
}

/** The application; `extra` routers are mounted after the domains' (tests use it to exercise the conventions). */
export function createApp(extra: ApiRouter[] = [], options: AppOptions = {}): Koa {
  const cfg = config();
  const app = new Koa(koaProxyOptions(cfg.http.trustProxy, cfg.http.proxyHeader));

  const byProxyAddress = clientAddress(cfg.http.trustProxy, cfg.http.proxyHeader);
  if (byProxyAddress) app.use(byProxyAddress);
  app.use(requestId());
  const requestLog = logger('http');
  // The access log: one line per request at info, with its route template (not the path, which may
  // carry ids and tokens); request_id comes from the request context (logger mixin).
  app.use(async (ctx, next) => {
    const end = httpDuration.startTimer();
    try {
      await next();
    } finally {
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      const seconds = end({ method: ctx.method, route, status: String(ctx.status) });
      requestLog.info({ method: ctx.method, route, status: ctx.status, duration_ms: Math.round(seconds * 1e4) / 10 }, 'request');
    }
  });
  app.use(problems());
  const webMode = options.web ?? defaultWebMode();
  app.use(securityHeaders({ inlineScripts: webMode === 'vite' }));
  app.use(canonicalPath());
  app.use(outageDeadline(cfg.http.outageDeadlineMs));
  app.use(
    bodyParser({
      enableTypes: ['json', 'form', 'text'],
      jsonLimit: cfg.http.bodyLimit,
      formLimit: cfg.http.bodyLimit,
      textLimit: cfg.http.bodyLimit,
      encoding: 'utf-8',
    }),
  );
  app.use(refuseDeepBodies(cfg.input.maxJsonDepth));

  mountQueueDashboard(app);
  mountWebApp(app, webMode, options.server, options.webDir);
  const docs = docsRouter();
  app.use(docs.routes());
  for (const middleware of routersMiddleware([...domainRouters(), ...extra])) app.use(middleware);

  if (!gaugesRegistered) {
    gaugesRegistered = true;
    registerQueueGauges(() =>
      Promise.all(allQueues().map(async (q) => ({ queue: q.name, counts: await q.getJobCounts('waiting', 'active', 'delayed', 'failed') }))),
    );
  }
  return app;
}

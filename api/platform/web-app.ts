/**
 * The browser app (api/web) on the API's own origin. Its pages (/, /admin/…, the portal's paths)
 * answer index.html so deep links work, behind the page guard; /admin/queues stays the queue dashboard.
 * `built`: dist/web from `npm run build` (static assets, immutable caching).
 * `vite`: Vite in middleware mode (npm run dev, tests), created on the first app request so
 * processes that never serve a page never pay for it; hot reload rides on the same HTTP server.
 */
import type http from 'node:http';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { config } from '../../shared/config.js';
import { fileURLToPath } from 'node:url';
import type Koa from 'koa';
import serve from 'koa-static';
import type { ViteDevServer } from 'vite';
import { onShutdown } from '../../shared/lifecycle.js';
import { pageAllowed, pageRole } from '../auth/page-guard.js';

export type WebMode = 'built' | 'vite' | 'off';

const here = path.dirname(fileURLToPath(import.meta.url));
const compiled = import.meta.url.endsWith('.js');
/** The repository root (source) or dist/ (compiled). */
const root = path.resolve(here, '../..');
const builtDir = compiled ? path.join(root, 'web') : path.join(root, 'dist/web');
const sourceDir = path.resolve(compiled ? path.join(root, '..') : root, 'api/web');

/**
 * Answers a page request with index.html when the page guard lets it through (no session: to
 * sign-in; /admin without the sre role: 403 page); false when the path is no page of the app.
 */
async function servePage(ctx: Koa.Context, html: () => Promise<string>): Promise<boolean> {
  const role = pageRole(ctx.path);
  if (role === null) return false;
  if (!(await pageAllowed(ctx, role))) return true;
  ctx.type = 'html';
  ctx.set('Cache-Control', 'no-cache');
  ctx.body = await html();
  return true;
}

/** Requests Vite answers itself in dev: modules, its client, dependency bundles. */
const viteOwned = /^\/(src\/|@vite\/|@fs\/|@id\/|@react-refresh|node_modules\/)/;

/** The mode when none is given: compiled code serves the build, source code runs Vite (never in production). */
export function defaultWebMode(): WebMode {
  if (compiled || process.env.NODE_ENV === 'production') return existsSync(path.join(builtDir, 'index.html')) ? 'built' : 'off';
  return 'vite';
}

/** Mounts the app; `server` carries Vite's hot-reload websocket in vite mode; `dir` replaces dist/web in built mode. */
/** Host names the development server answers to: loopback and PUBLIC_URL's host. */
function devHostAllowed(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '127.0.0.1' || host === '::1' || host === new URL(config().publicUrl).hostname.toLowerCase();
}

/** The app's icon (api/web/public, which the build copies into dist/web): browsers ask every origin for /favicon.ico. */
const faviconFile = path.join(sourceDir, 'public', 'favicon.ico');

function serveFavicon(file: string): Koa.Middleware {
  // Read once; a build without the icon answers 404 as before.
  const icon = readFile(file).catch(() => undefined);
  return async (ctx, next) => {
    if (ctx.path !== '/favicon.ico' || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    const body = await icon;
    if (!body) return next();
    ctx.type = 'image/x-icon';
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = body;
  };
}

export function mountWebApp(app: Koa, mode: WebMode, server?: http.Server, dir = builtDir): void {
  if (mode === 'off') return;
  app.use(serveFavicon(mode === 'built' ? path.join(dir, 'favicon.ico') : faviconFile));
  if (mode === 'built') {
    const assets = serve(dir, { index: false, maxage: 365 * 24 * 3600 * 1000, immutable: true });
    let indexHtml: Promise<string> | undefined;
    app.use(async (ctx, next) => {
      if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
      if (ctx.path.startsWith('/assets/')) return assets(ctx, next);
      if (!(await servePage(ctx, () => (indexHtml ??= readFile(path.join(dir, 'index.html'), 'utf8'))))) await next();
    });
    return;
  }
  let vite: Promise<ViteDevServer> | undefined;
  const devServer = () =>
    (vite ??= import('vite').then(async ({ createServer }) => {
      const v = await createServer({
        configFile: path.join(sourceDir, 'vite.config.ts'),
        server: { middlewareMode: true, hmr: server ? { server } : false },
        appType: 'custom',
      });
      onShutdown('vite', () => v.close());
      return v;
    }));
  app.use(async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    // A page served by the dev server under another host name is a DNS-rebinding attempt: refused.
    if (!devHostAllowed(ctx.hostname)) return next();
    const page = () => devServer().then(async (v) => v.transformIndexHtml(ctx.originalUrl, await readFile(path.join(sourceDir, 'index.html'), 'utf8')));
    if (await servePage(ctx, page)) return;
    if (!viteOwned.test(ctx.path)) return next();
    const v = await devServer();
    const handled = await new Promise<boolean>((resolve, reject) => {
      ctx.res.once('close', () => resolve(true));
      v.middlewares(ctx.req, ctx.res, (err?: unknown) => (err ? reject(err) : resolve(false)));
    });
    if (handled) ctx.respond = false;
    else await next();
  });
}

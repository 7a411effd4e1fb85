/**
 * Operator queue dashboard (bull-board) at /admin/queues: behind the console's sign-in (role sre) when
 * OpenID Connect is configured, admin basic auth otherwise; cross-site requests that change anything
 * are refused (browsers resend basic auth and cookies with a form another site posts here).
 */
import type Koa from 'koa';
import type { Context } from 'koa';
import { allQueues } from '../../shared/queues.js';
import { config } from '../../shared/config.js';
import { ForbiddenError } from '../../shared/errors.js';
import { requireAdmin } from '../middleware/auth.js';
import { pageAllowed } from '../auth/page-guard.js';

export const dashboardPath = '/admin/queues';

/**
 * bull-board is loaded on the dashboard's first request, not at start: its packages held 8 MB of
 * heap in every API process, most of which never serves the dashboard.
 */
async function loadBoard(): Promise<Koa.Middleware> {
  const [{ createBullBoard }, { BullMQAdapter }, { KoaAdapter }] = await Promise.all([
    import('@bull-board/api'),
    import('@bull-board/api/bullMQAdapter'),
    import('@bull-board/koa'),
  ]);
  const adapter = new KoaAdapter();
  adapter.setBasePath(dashboardPath);
  createBullBoard({ queues: allQueues().map((q) => new BullMQAdapter(q)), serverAdapter: adapter });
  return adapter.registerPlugin();
}

const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A request that changes something must come from this site: Sec-Fetch-Site and Origin say where it came from. */
function refuseCrossSite(ctx: Context): void {
  if (safeMethods.has(ctx.method)) return;
  const site = ctx.get('Sec-Fetch-Site');
  const origin = ctx.get('Origin');
  if ((site && site !== 'same-origin' && site !== 'none') || (origin && origin !== new URL(config().publicUrl).origin)) {
    throw new ForbiddenError('Cross-site requests to the queue dashboard are refused.');
  }
}

export function mountQueueDashboard(app: Koa): void {
  const basic = requireAdmin();
  // Signed-in operators (sre) where the console's sign-in exists; basic auth only without it.
  const guard: Koa.Middleware = async (ctx, next) => {
    if (!config().auth.oidc.issuerUrl) return basic(ctx, next);
    if (await pageAllowed(ctx, 'sre')) await next();
  };
  let board: Promise<Koa.Middleware> | undefined;
  app.use(async (ctx, next) => {
    if (ctx.path !== dashboardPath && !ctx.path.startsWith(`${dashboardPath}/`)) return next();
    // A failed load (say, a broken install) is retried by the next request instead of cached.
    board ??= loadBoard().catch((err) => {
      board = undefined;
      throw err;
    });
    const loading = board;
    refuseCrossSite(ctx);
    await guard(ctx, async () => (await loading)(ctx, next));
  });
}

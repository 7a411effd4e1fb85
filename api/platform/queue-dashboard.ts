/** Operator queue dashboard (bull-board) at /admin/queues, behind admin basic auth. */
import type Koa from 'koa';
import { allQueues } from '../../shared/queues.js';
import { requireAdmin } from '../middleware/auth.js';

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

export function mountQueueDashboard(app: Koa): void {
  const guard = requireAdmin();
  let board: Promise<Koa.Middleware> | undefined;
  app.use(async (ctx, next) => {
    if (ctx.path !== dashboardPath && !ctx.path.startsWith(`${dashboardPath}/`)) return next();
    // A failed load (say, a broken install) is retried by the next request instead of cached.
    board ??= loadBoard().catch((err) => {
      board = undefined;
      throw err;
    });
    const loading = board;
    await guard(ctx, async () => (await loading)(ctx, next));
  });
}

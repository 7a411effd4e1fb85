/** Operator queue dashboard (bull-board) at /admin/queues, behind admin basic auth. */
import type Koa from 'koa';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { KoaAdapter } from '@bull-board/koa';
import { allQueues } from '../../shared/queues.js';
import { requireAdmin } from '../middleware/auth.js';

export const dashboardPath = '/admin/queues';

export function mountQueueDashboard(app: Koa): void {
  const adapter = new KoaAdapter();
  adapter.setBasePath(dashboardPath);
  createBullBoard({ queues: allQueues().map((q) => new BullMQAdapter(q)), serverAdapter: adapter });
  const guard = requireAdmin();
  const board = adapter.registerPlugin();
  app.use(async (ctx, next) => {
    if (ctx.path !== dashboardPath && !ctx.path.startsWith(`${dashboardPath}/`)) return next();
    await guard(ctx, () => board(ctx, next));
  });
}

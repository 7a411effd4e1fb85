/**
 * Probes of the roles: liveness says the process answers (nothing else, so a dependency's outage
 * never gets every replica restarted); readiness says whether it should be given work: not stopping,
 * and its dependencies answer through the connections the process already holds. The web role
 * serves both through its router (api/platform/health.routes.ts); the worker and email roles
 * through the small server here.
 */
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { db } from './db/index.js';
import { redisAnswers } from './redis.js';
import { closeAtShutdown, isStopping } from './lifecycle.js';

export type CheckState = 'up' | 'down';

/** Whether PostgreSQL answers within the timeout, through the process's pool (no connection of its own). */
export function postgresAnswers(timeoutMs = 2000): Promise<CheckState> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<CheckState>((resolve) => (timer = setTimeout(() => resolve('down'), timeoutMs)));
  const answer = db().raw('select 1').then(() => 'up' as const, () => 'down' as const);
  return Promise.race([answer, late]).finally(() => clearTimeout(timer));
}

/** Whether Redis answers within the timeout, through the process's kept probe connection. */
export const redisState = (timeoutMs = 1000): Promise<CheckState> => redisAnswers(timeoutMs).then((ok) => (ok ? 'up' : 'down'));

export interface ProbeServerOptions {
  /** Names the server in the shutdown log. */
  name: string;
  port: number;
  host: string;
  /** The role's dependency checks, each 'up' or 'down'. */
  checks: () => Promise<Record<string, CheckState>>;
  /** Other paths this server answers (the worker's /metrics); false leaves the request to a 404. */
  other?: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<boolean> | boolean;
}

const json = (res: http.ServerResponse, status: number, body: unknown) =>
  void res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));

/**
 * Serves GET /healthz (liveness: 200 while the process answers) and GET /readyz (200 when every
 * check is up; 503 naming them otherwise, and from the moment shutdown began). It closes with the
 * connections, after the role's work has stopped, so an orchestrator sees the process alive
 * while it drains. Resolves with the port bound (0 leaves it to the system).
 */
export async function startProbeServer(opts: ProbeServerOptions): Promise<{ port: number }> {
  const server = http.createServer(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/healthz') return json(res, 200, { status: 'ok' });
    if (req.method === 'GET' && path === '/readyz') {
      if (isStopping()) return json(res, 503, { status: 'stopping' });
      const checks = await opts.checks();
      const ready = Object.values(checks).every((s) => s === 'up');
      return json(res, ready ? 200 : 503, { status: ready ? 'ready' : 'not_ready', checks });
    }
    if (opts.other && (await opts.other(req, res))) return;
    res.writeHead(404).end();
  });
  server.listen(opts.port, opts.host);
  // A port that cannot be bound stops start-up with its reason, like any other start-up failure.
  await once(server, 'listening');
  closeAtShutdown(`${opts.name} probes`, () => new Promise((resolve) => server.close(resolve)));
  return { port: (server.address() as AddressInfo).port };
}

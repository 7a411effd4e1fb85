/**
 * What the benchmarks share: a database and queue prefix of their own, the roles started as child
 * processes the way production starts them, a keep-alive HTTP caller, the memory of a process as the
 * kernel counts it, and the machine's load average.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { cloneTemplate, dropDatabase, ensureTemplate, serverUrl } from '../helpers/databases.js';
import { deleteKeysWithPrefix, redisAddress } from '../helpers/redis-keys.js';

export const now = () => performance.timeOrigin + performance.now();
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
/** The machine's load average (1, 5, 15 minutes), printed with every figure: one taken beside other work is noise. */
export const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** Resident and peak resident memory of a process, in MB. */
export function rssMb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** A database cloned from the migrated template and a queue prefix, both removed by `drop`. */
export async function benchStorage(): Promise<{ database: string; prefix: string; drop(): Promise<void> }> {
  const database = await cloneTemplate(await ensureTemplate());
  const prefix = `sbbench-${randomBytes(4).toString('hex')}`;
  return {
    database,
    prefix,
    async drop() {
      await dropDatabase(database);
      await deleteKeysWithPrefix(prefix, redisAddress());
    },
  };
}

/** A secret made up for one run, long enough for a start that requires real credentials (MIN_SECRET_LENGTH). */
export const runSecret = (name: string) => `bench-${name}-${randomBytes(8).toString('hex')}`;

/**
 * The environment of roles started by a benchmark on its own database and queue prefix: a development
 * start with real credentials, as an operator's staging machine runs it (NODE_ENV=test is the suite's,
 * refused by the built platform; production needs a real identity provider and https). API_KEYS in
 * `extra` must be real keys too (at least MIN_SECRET_LENGTH characters).
 */
export function roleEnv(database: string, prefix: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_ENV: 'development',
    SWITCHBOARD_DEV: '',
    ADMIN_USER: 'bench',
    ADMIN_PASSWORD: runSecret('admin'),
    ALERT_WEBHOOK_TOKEN: runSecret('alerts'),
    CRM_WEBHOOK_SECRET: runSecret('crm'),
    DATABASE_URL: serverUrl(database),
    QUEUE_PREFIX: prefix,
    SERVICE_SESSION_SYSTEM: 'true',
    LOG_LEVEL: 'info',
    HOST: '127.0.0.1',
    PORT: '0',
    WORKER_METRICS_PORT: '0',
    // A bench stops its platform between phases: no load balancer to drain for.
    SHUTDOWN_DRAIN_DELAY_MS: '0',
    ...extra,
  };
}

/** Starts a role (api/main.ts, or dist/api/main.js compiled) as a child process with the roles' Node flags; BENCH_PROF=<dir> writes a V8 CPU profile of each role there. */
export function startRole(entry: string, env: NodeJS.ProcessEnv, ready: RegExp, nodeFlags: string[] = []): Promise<{ child: ChildProcess; line: string }> {
  const profile = process.env.BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROF}`] : [];
  const extra = [...nodeFlags, ...(process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? [])];
  // Source runs under tsx as in development and tests; a compiled entry (dist/…/*.js) as npm start runs it.
  const loader = entry.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const child = spawn(process.execPath, [...profile, ...extra, ...loader, entry], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${entry} did not start`)), 60_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (ready.test(line)) {
        clearTimeout(timer);
        resolve({ child, line });
      }
    });
    child.on('exit', (code) => reject(new Error(`${entry} exited with ${code}`)));
  });
}

/** Stops child processes with SIGTERM and waits for them. */
export async function stopProcesses(children: ChildProcess[]): Promise<void> {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null || c.signalCode !== null ? r(null) : c.once('exit', r)))));
}

export interface HttpAnswer {
  status: number;
  body: any;
}

/** A JSON caller over plain node:http with a keep-alive agent (GET without a body, POST with one); 0 when no answer came. */
export function httpCaller(base: string, headers: Record<string, string>, maxSockets = 512) {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const call = (path: string, body?: unknown, raw = false): Promise<HttpAnswer> =>
    new Promise<HttpAnswer>((resolve) => {
      const payload = body === undefined ? undefined : raw ? String(body) : JSON.stringify(body);
      const req = http.request(
        base + path,
        {
          agent,
          method: body === undefined ? 'GET' : 'POST',
          headers: { ...headers, ...(payload !== undefined ? { 'Content-Type': raw ? 'text/plain' : 'application/json', 'Content-Length': Buffer.byteLength(payload) } : {}) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d) => (text += d));
          res.on('end', () => {
            let parsed: unknown = text;
            try {
              parsed = text ? JSON.parse(text) : null;
            } catch {
              // nchan answers its publisher in plain text
            }
            resolve({ status: res.statusCode ?? 0, body: parsed });
          });
        },
      );
      req.on('error', () => resolve({ status: 0, body: null }));
      req.end(payload);
    });
  return { call, close: () => agent.destroy() };
}

/** Polls `url` until it answers 200; resolves with the moment it did. */
export async function waitForReady(url: string, timeoutMs = 120_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await new Promise<number>((resolve) => {
      const req = http.get(url, { agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', () => resolve(0));
      req.setTimeout(5_000, () => req.destroy());
    });
    if (status === 200) return now();
    if (Date.now() > deadline) throw new Error(`${url} not ready after ${timeoutMs / 1000} s (last status ${status})`);
    await sleep(50);
  }
}

/** Runs `op` over `items` with at most `limit` at a time. */
export async function inPool<T>(items: T[], limit: number, op: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await op(items[i]!, i);
      }
    }),
  );
}

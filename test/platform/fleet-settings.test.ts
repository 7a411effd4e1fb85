/**
 * Settings for running on many hosts: REDIS_URL, REDIS_SENTINELS, OTEL_*, <NAME>_FILE, .env, a release step that needs only
 * DATABASE_URL, the worker's /healthz and /metrics on a chosen address, and WORKER_QUEUES.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../shared/config.js';
import { loadDotEnv } from '../../shared/env-file.js';
import { metricsRegistry } from '../../shared/metrics.js';
import { stopChildren } from '../../shared/cli/roles.js';

const root = path.resolve(import.meta.dirname, '../..');
const base = { NODE_ENV: 'test' } as NodeJS.ProcessEnv;
const tmp = () => mkdtempSync(path.join(tmpdir(), 'sb-fleet-'));

describe('REDIS_URL', () => {
  it('carries TLS (rediss), an ACL user, a password with escapes and a database index; it replaces BUS_*', () => {
    const { redis } = loadConfig({ ...base, BUS_HOST: 'ignored', REDIS_URL: 'rediss://app:p%40ss@redis.internal:6380/2' });
    expect(redis).toMatchObject({ host: 'redis.internal', port: 6380, username: 'app', password: 'p@ss', db: 2, tls: { servername: 'redis.internal' } });
    expect(loadConfig({ ...base, BUS_HOST: 'bus', BUS_PORT: '7000', BUS_PASSWORD: 'pw' }).redis).toMatchObject({ host: 'bus', port: 7000, password: 'pw', db: 0, tls: undefined });
  });

  it('is refused when it is not a redis:// or rediss:// URL', () => {
    expect(() => loadConfig({ ...base, REDIS_URL: 'http://redis:6379' })).toThrow(/REDIS_URL: must be a redis:\/\/ or rediss:\/\/ URL/);
  });

  it('a connection made from it selects the database of its path', async () => {
    const address = `${process.env.BUS_HOST ?? '127.0.0.1'}:${process.env.BUS_PORT ?? '6379'}`;
    const { redis } = loadConfig({ ...base, REDIS_URL: `redis://${address}/5` });
    const conn = new Redis({ host: redis.host, port: redis.port, db: redis.db, username: redis.username, password: redis.password });
    try {
      expect(await conn.client('INFO')).toMatch(/ db=5 /);
    } finally {
      conn.disconnect();
    }
  });
});

describe('REDIS_SENTINELS', () => {
  it('names the sentinels and the master; passwords of sentinels and master also come from files; the master keeps REDIS_URL\'s user and database', () => {
    const dir = tmp();
    writeFileSync(path.join(dir, 'sentinel'), 'sentinel-secret\n');
    const { redis } = loadConfig({
      ...base,
      REDIS_URL: 'redis://app:master-secret@ignored:6379/3',
      REDIS_SENTINELS: 's1.internal:26379, s2.internal:26380,10.0.0.3:26379',
      REDIS_SENTINEL_MASTER: 'switchboard',
      REDIS_SENTINEL_PASSWORD_FILE: path.join(dir, 'sentinel'),
    });
    expect(redis).toMatchObject({ username: 'app', password: 'master-secret', db: 3 });
    expect(redis.sentinel).toEqual({
      masterName: 'switchboard',
      sentinels: [{ host: 's1.internal', port: 26379 }, { host: 's2.internal', port: 26380 }, { host: '10.0.0.3', port: 26379 }],
      username: undefined,
      password: 'sentinel-secret',
    });
    expect(loadConfig(base).redis.sentinel).toBeUndefined();
  });

  it('is refused, naming it, when an entry is not host:port', () => {
    expect(() => loadConfig({ ...base, REDIS_SENTINELS: 's1:26379,s2' })).toThrow(/REDIS_SENTINELS: must look like sentinel-1:26379,sentinel-2:26379/);
  });
});

describe('OTEL_*', () => {
  it('tracing is on only with an OTLP endpoint, and OTEL_SDK_DISABLED keeps it off', () => {
    expect(loadConfig(base).telemetry.enabled).toBe(false);
    expect(loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).telemetry.enabled).toBe(true);
    expect(loadConfig({ ...base, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }).telemetry.enabled).toBe(true);
    expect(loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }).telemetry.enabled).toBe(false);
  });
});

describe('DATABASE_URL', () => {
  it('carries PostgreSQL TLS to the client: sslmode=require refuses a server without TLS instead of talking in the clear', async () => {
    const { default: knex } = await import('knex');
    const { knexOptions } = await import('../../shared/db/index.js');
    const url = new URL(process.env.DATABASE_URL!);
    url.searchParams.set('sslmode', 'require');
    const tls = knex(knexOptions(url.toString(), 1, { connectMs: 2000, acquireMs: 3000 }));
    try {
      // The test PostgreSQL runs without TLS; a client that dropped sslmode would answer 1.
      await expect(tls.raw('select 1')).rejects.toThrow(/does not support SSL/i);
    } finally {
      await tls.destroy();
    }
  });
});

describe('<NAME>_FILE', () => {
  it('reads a variable from the file it names (one trailing newline dropped), as container secrets are mounted', () => {
    const dir = tmp();
    writeFileSync(path.join(dir, 'keys'), 'k1,k2\n');
    writeFileSync(path.join(dir, 'db'), 'postgres://app:secret@db.internal:5432/switchboard?sslmode=require\n');
    const cfg = loadConfig({ ...base, API_KEYS_FILE: path.join(dir, 'keys'), DATABASE_URL_FILE: path.join(dir, 'db') });
    expect(cfg.auth.apiKeys).toEqual(['k1', 'k2']);
    expect(cfg.db.url).toBe('postgres://app:secret@db.internal:5432/switchboard?sslmode=require');
  });

  it('both NAME and NAME_FILE, or a file that cannot be read, is an error naming the variable', () => {
    const dir = tmp();
    writeFileSync(path.join(dir, 'token'), 't');
    expect(() => loadConfig({ ...base, METRICS_TOKEN: 'x', METRICS_TOKEN_FILE: path.join(dir, 'token') })).toThrow(/METRICS_TOKEN_FILE: set either METRICS_TOKEN or METRICS_TOKEN_FILE, not both/);
    expect(() => loadConfig({ ...base, ADMIN_PASSWORD_FILE: path.join(dir, 'missing') })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, ADMIN_PASSWORD_FILE: path.join(dir, 'missing') })).toThrow(/ADMIN_PASSWORD_FILE: cannot read .*missing \(ENOENT\)/);
  });
});

describe('.env', () => {
  it('npm run dev and npm start read .env of the working directory; a variable already set wins', () => {
    const file = path.join(tmp(), '.env');
    writeFileSync(file, 'SB_FLEET_FROM_FILE=file\nSB_FLEET_BOTH=file\n');
    process.env.SB_FLEET_BOTH = 'environment';
    expect(loadDotEnv(file)).toBe(file);
    expect([process.env.SB_FLEET_FROM_FILE, process.env.SB_FLEET_BOTH]).toEqual(['file', 'environment']);
    expect(loadDotEnv(path.join(tmp(), '.env'))).toBeUndefined();
  });
});

describe('metrics', () => {
  it('the platform\'s metrics carry the switchboard_ prefix, with switchboard_build_info naming the release', async () => {
    const text = await metricsRegistry.metrics();
    expect(text).toMatch(/^switchboard_build_info\{version="\d+\.\d+\.\d+",node_version="v\d+\.\d+\.\d+"\} 1$/m);
    expect(text).toMatch(/^# TYPE switchboard_http_request_duration_seconds histogram$/m);
    // 0 or 1: the TLS test above makes this process see PostgreSQL refuse it.
    expect(text).toMatch(/^switchboard_dependency_outage\{dependency="postgres"\} [01]$/m);
    expect(text).not.toMatch(/^# TYPE (http_request_duration_seconds|queue_job_duration_seconds|queue_jobs) /m);
  });
});

describe('migrate (the release step)', () => {
  it('needs only DATABASE_URL, also in production (no sign-in, CRM or API credentials)', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(root, 'shared/cli/migrate.ts')], {
      cwd: root,
      env: { PATH: process.env.PATH, NODE_ENV: 'production', DATABASE_URL: process.env.DATABASE_URL },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/migrations: already current|applied \d+ migration/);
  }, 60_000);

  it('in production without DATABASE_URL it stops, naming it', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(root, 'shared/cli/migrate.ts')], { cwd: root, env: { PATH: process.env.PATH, NODE_ENV: 'production' }, encoding: 'utf8', timeout: 60_000 });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('DATABASE_URL: required when NODE_ENV=production');
  }, 60_000);
});

describe('worker processes on many hosts', () => {
  const args = ['--import', 'tsx', path.join(root, 'workers/main.ts')];

  it('serve /healthz, /readyz and /metrics on WORKER_METRICS_HOST, and run only the queues of WORKER_QUEUES', async () => {
    const worker = spawn(process.execPath, args, {
      cwd: root,
      env: { ...process.env, WORKER_METRICS_HOST: '127.0.0.2', WORKER_METRICS_PORT: '0', WORKER_QUEUES: 'crm, discovery', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: worker.stdout! }).on('line', (l) => l.includes('workers running') && resolve(l));
        worker.once('exit', (code) => reject(new Error(`worker exited (${code}) before it ran`)));
      });
      const started = JSON.parse(line) as { queues: string[]; metrics: string; health: string; ready: string };
      expect(started.queues).toEqual(['crm', 'discovery']);
      expect(started.health).toMatch(/^http:\/\/127\.0\.0\.2:\d+\/healthz$/);
      const health = await fetch(started.health);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok' });
      const ready = await fetch(started.ready);
      expect(await ready.json()).toEqual({ status: 'ready', checks: { workers: 'up', postgres: 'up', redis: 'up' } });
      expect((await fetch(started.metrics)).status).toBe(200);
    } finally {
      await stopChildren([worker]);
    }
  }, 60_000);

  it('WORKER_QUEUES naming a queue that does not exist stops start-up, naming it', () => {
    const run = spawnSync(process.execPath, args, { cwd: root, env: { ...process.env, WORKER_QUEUES: 'crm,nope' }, encoding: 'utf8', timeout: 60_000 });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('WORKER_QUEUES: unknown queue(s) nope');
  }, 60_000);

  it('the sessions queue brings its lanes', () => {
    return import('../../workers/runner.js').then(({ workerQueues }) => {
      expect(workerQueues(['sessions', 'crm', 'sessions-lane-0', 'sessions-lane-1'], ['sessions'])).toEqual(['sessions', 'sessions-lane-0', 'sessions-lane-1']);
      expect(workerQueues(['sessions', 'crm'], undefined)).toEqual(['sessions', 'crm']);
    });
  });
});

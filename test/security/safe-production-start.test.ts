/**
 * A production start refuses development conveniences, short secrets and an open /metrics, and says
 * why in one line per problem without a stack trace; answers carry security headers, personal answers
 * `no-store`; abandoned sign-in rows expire.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseEnv, startupSafetyProblems } from '../../shared/config.js';
import { startPlatform, type Platform } from '../helpers/platform.js';

const root = path.resolve(import.meta.dirname, '../..');
const long = 'a-long-enough-secret-value';
const production = {
  NODE_ENV: 'production',
  DATABASE_URL: 'postgres://x@h/db',
  API_KEYS: long,
  ADMIN_USER: 'ops',
  ADMIN_PASSWORD: long,
  ALERT_WEBHOOK_TOKEN: long,
  CRM_WEBHOOK_SECRET: long,
  METRICS_TOKEN: long,
  PUBLIC_URL: 'https://ops.example.org',
  OIDC_ISSUER_URL: 'https://id.example.org',
  OIDC_CLIENT_ID: 'switchboard',
  OIDC_CLIENT_SECRET: long,
};
const problems = (env: Record<string, string>) => {
  try {
    parseEnv(env);
    return '';
  } catch (err) {
    return (err as Error).message;
  }
};

describe('safe production start', () => {
  it('production refuses development mode, an open /metrics and secrets shorter than 16 characters', () => {
    expect(problems(production)).toBe('');
    expect(problems({ ...production, SWITCHBOARD_DEV: 'true' })).toContain('SWITCHBOARD_DEV: must not be set when NODE_ENV=production');
    expect(problems({ ...production, METRICS_TOKEN: '' })).toContain('METRICS_TOKEN: required');
    const short = problems({ ...production, API_KEYS: `${long},x`, ADMIN_PASSWORD: 'p', ALERT_WEBHOOK_TOKEN: 't', CRM_WEBHOOK_SECRET: 's', METRICS_TOKEN: 'm' });
    for (const name of ['API_KEYS', 'ADMIN_PASSWORD', 'ALERT_WEBHOOK_TOKEN', 'CRM_WEBHOOK_SECRET', 'METRICS_TOKEN']) expect(short).toContain(`${name}: must be at least 16 characters`);
  });

  it('the built platform refuses the test mode as it refuses development mode, whatever else is set', () => {
    const { NODE_ENV: _, ...rest } = production;
    const testMode = parseEnv({ ...rest, NODE_ENV: 'test' });
    expect(startupSafetyProblems(testMode, true, false)).toEqual([]);
    expect(startupSafetyProblems(testMode, true, true)).toEqual([expect.stringMatching(/^NODE_ENV: test is for the test suite only; the built platform .* refuses it/)]);
    expect(startupSafetyProblems(parseEnv({ ...rest, NODE_ENV: 'development' }), true, true)).toEqual([]);
    expect(startupSafetyProblems(parseEnv({ ...rest, NODE_ENV: 'development', SWITCHBOARD_DEV: 'true' }), true, false)).toEqual([]);
    expect(startupSafetyProblems(parseEnv({ ...rest, NODE_ENV: 'development', SWITCHBOARD_DEV: 'true' }), true, true)).toEqual([expect.stringContaining('SWITCHBOARD_DEV: is for npm run dev only')]);
  });

  it('a refused start says why in one line per problem, without a stack trace', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(root, 'api/main.ts')], {
      cwd: root,
      env: { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', ...production, SWITCHBOARD_DEV: 'true', ADMIN_PASSWORD: 'p' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('SWITCHBOARD_DEV: must not be set when NODE_ENV=production');
    expect(run.stderr).toContain('ADMIN_PASSWORD: must be at least 16 characters');
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('answers', () => {
  let api: Platform;
  beforeAll(async () => {
    api = await startPlatform({ workers: false });
  });

  it('carry security headers, and personal answers no-store', async () => {
    const res = await api.request('/api/v1/leads');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('strict-origin-when-cross-origin');
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(res.headers.get('cache-control')).toContain('no-store');
    const docs = await api.request('/api/docs', { auth: false });
    expect(docs.headers.get('x-content-type-options')).toBe('nosniff');
    expect(docs.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    // HSTS only where PUBLIC_URL is https (not this test's http).
    expect(res.headers.get('strict-transport-security')).toBeNull();
  });

  it('abandoned sign-in rows expire on their own', async () => {
    const { db } = await import('../../shared/db/index.js');
    const { expireAbandonedLogins } = await import('../../shared/auth/auth-sessions.store.js');
    const cols = await db()('auth_logins').columnInfo();
    const row: Record<string, unknown> = { state: 'old-state', created_at: new Date(Date.now() - 3600_000) };
    for (const [name, info] of Object.entries(cols)) if (!(name in row) && !info.nullable && info.defaultValue === null) row[name] = 'x';
    await db()('auth_logins').insert(row);
    await expireAbandonedLogins();
    expect(await db()('auth_logins').where({ state: 'old-state' }).first()).toBeUndefined();
  });
});

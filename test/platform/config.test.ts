import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { loadConfig, parseEnv, variables } from '../../shared/config.js';

describe('configuration', () => {
  it('applies the spec defaults when nothing is set', () => {
    const cfg = loadConfig({});
    expect(cfg.sessions).toMatchObject({ enabled: false, resumeWindow: '24 hours', maxHistory: 50, keepAliveSeconds: 15 });
    expect(cfg.redis).toMatchObject({ host: 'localhost', port: 6379 });
    expect(cfg.sre.discovery).toMatchObject({ enabled: true, intervalSeconds: 300 });
    expect(cfg.http.port).toBe(3000);
    expect(cfg.auth.apiKeys).toEqual(['dev-key']);
    expect(cfg.auth.admin).toEqual({ user: 'admin', password: 'admin' });
  });

  it('lists every bad variable in one error', () => {
    expect(() => parseEnv({ BUS_PORT: 'abc', SERVICE_SESSION_RESUME_WINDOW: 'soon', DISCOVERY_ENABLED: 'maybe', LLM_PROVIDER: 'x' })).toThrow(
      /BUS_PORT[\s\S]*SERVICE_SESSION_RESUME_WINDOW[\s\S]*DISCOVERY_ENABLED|DISCOVERY_ENABLED[\s\S]*BUS_PORT/,
    );
    try {
      parseEnv({ BUS_PORT: 'abc', SERVICE_SESSION_RESUME_WINDOW: 'soon', DISCOVERY_ENABLED: 'maybe', LLM_PROVIDER: 'x' });
    } catch (err) {
      for (const name of ['BUS_PORT', 'SERVICE_SESSION_RESUME_WINDOW', 'DISCOVERY_ENABLED', 'LLM_PROVIDER']) expect(String(err)).toContain(name);
    }
  });

  it('production refuses to start without DATABASE_URL or API_KEYS, naming them', () => {
    expect(() => parseEnv({ NODE_ENV: 'production' })).toThrow(/DATABASE_URL[\s\S]*API_KEYS/);
    expect(() => parseEnv({ NODE_ENV: 'production', DATABASE_URL: 'postgres://x@h/db' })).toThrow(/API_KEYS/);
    const ok = { NODE_ENV: 'production', DATABASE_URL: 'postgres://x@h/db', API_KEYS: 'a,b', ADMIN_PASSWORD: 'p', ALERT_WEBHOOK_TOKEN: 't' };
    expect(loadConfig(ok).auth.apiKeys).toEqual(['a', 'b']);
  });

  it('.env.example documents every variable', () => {
    const example = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
    for (const name of Object.keys(variables)) expect(example).toMatch(new RegExp(`^#?\\s*${name}=`, 'm'));
  });
});

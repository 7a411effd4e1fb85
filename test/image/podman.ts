/**
 * What the container tests share: podman (runc runtime) commands, the locally built base image,
 * the project's image, a fresh database on the test PostgreSQL, waits, and the closing count.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Runs podman with the runc runtime; returns stdout, throws with stderr on failure. */
export function podman(args: string[], options: { input?: string; allowFail?: boolean; timeoutMs?: number } = {}): { code: number; out: string; err: string } {
  const r = spawnSync('podman', ['--runtime', 'runc', ...args], { cwd: root, input: options.input, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: options.timeoutMs ?? 15 * 60_000 });
  const code = r.status ?? 1;
  if (code !== 0 && !options.allowFail) throw new Error(`podman ${args.slice(0, 3).join(' ')} … exited ${code}: ${(r.stderr || r.stdout || '').trim().split('\n').slice(-15).join('\n')}`);
  return { code, out: (r.stdout ?? '').trim(), err: (r.stderr ?? '').trim() };
}

/**
 * The image the Dockerfile builds FROM: NODE_IMAGE when given (e.g. the official node:24-bookworm-slim
 * where a registry is reachable), else the local stand-in deploy/base-image.sh builds (and keeps).
 */
export function baseImage(): string {
  const tag =
    process.env.NODE_IMAGE ??
    execFileSync('bash', [path.join(root, 'deploy/base-image.sh')], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n').pop()!;
  containersStart(tag);
  return tag;
}

/**
 * Fails before the long build where podman cannot start a container at all. Rootful podman gives a
 * container 1048576 open files and processes unless told otherwise; root without CAP_SYS_RESOURCE
 * (inside some VMs and sandboxes) may not raise its limits that far, and runc refuses to start.
 */
export function containersStart(image: string): void {
  const r = podman(['run', '--rm', '--network', 'host', '--entrypoint', 'node', image, '--version'], { allowFail: true });
  if (r.code === 0) return;
  const hint = /error setting rlimit/.test(r.err)
    ? '\npodman cannot raise the containers\' limits here: set `default_ulimits = []` under [containers] in /etc/containers/containers.conf (containers then keep podman\'s own limits; .ci/run does this)'
    : '';
  throw new Error(`podman cannot start a container from ${image}: ${r.err.split('\n').slice(-3).join('\n')}${hint}`);
}

/** Builds the project's image on `base`; returns its size in bytes and the seconds the build took. */
export function buildImage(tag: string, base: string): { bytes: number; seconds: number } {
  const started = Date.now();
  // Docker format: the OCI image format has no HEALTHCHECK. The build's output goes to stderr as it comes.
  // The OCI labels' values, as a release build passes them.
  const revision = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).stdout.trim() || 'unknown';
  const version = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
  const labels = ['--build-arg', `VERSION=${version}`, '--build-arg', `REVISION=${revision}`, '--build-arg', `CREATED=${new Date().toISOString()}`];
  const r = spawnSync('podman', ['--runtime', 'runc', 'build', '--format', 'docker', '--network', 'host', '--build-arg', `NODE_IMAGE=${base}`, ...labels, '-t', tag, '-f', 'Dockerfile', '.'], {
    cwd: root,
    stdio: ['ignore', process.stderr, process.stderr],
  });
  if (r.status !== 0) throw new Error(`podman build exited ${r.status}`);
  const bytes = Number(podman(['image', 'inspect', '--format', '{{.Size}}', tag]).out);
  return { bytes, seconds: (Date.now() - started) / 1000 };
}

export const adminUrl = process.env.TEST_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A new empty database on the test PostgreSQL; returns its URL and how to drop it. */
export async function freshDatabase(prefix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

/** Polls `check` until it returns a value, or throws `what` after `ms`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, ms = 90_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000} s${last ? ` (${(last as Error).message})` : ''}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** GET url; resolves with the status (and body) once it answers 200. */
export const answers200 = async (url: string) => {
  const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
  return res.status === 200 ? await res.text() : undefined;
};

/** One check of a container test: prints it and counts it, so the run ends with "N passed, N failed". */
export function checks() {
  let passed = 0;
  let failed = 0;
  return {
    async run(name: string, fn: () => Promise<string | void> | string | void) {
      try {
        const note = await fn();
        passed += 1;
        console.log(`  ✓ ${name}${note ? ` — ${note}` : ''}`);
      } catch (err) {
        failed += 1;
        console.log(`  ✗ ${name}\n      ${(err as Error).message.split('\n').join('\n      ')}`);
      }
    },
    close(): never {
      console.log(`${passed} passed, ${failed} failed`);
      process.exit(failed ? 1 : 0);
    },
    get failed() {
      return failed;
    },
  };
}

/**
 * A round trip of the session stream across processes: a subscriber of channel voice on `subscribeTo`
 * receives a message published on channel chat through `publishTo`. Returns the event's text.
 */
export async function messageRoundTrip(publishTo: string, subscribeTo: string, apiKey: string): Promise<string> {
  const call = async (base: string, route: string, body: unknown, status: number) => {
    const res = await fetch(`${base}${route}`, { method: 'POST', headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const json = (await res.json()) as Record<string, any>;
    if (res.status !== status) throw new Error(`POST ${route}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const phone = `+1555${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
  const user = await call(publishTo, '/api/users', { phone_number: phone, display_name: 'Image test' }, 201);
  const session = await call(publishTo, '/api/sessions/resolve', { user_id: user.user_id }, 200);
  const chat = await call(publishTo, `/api/sessions/${session.session_id}/interactions`, { channel: 'chat' }, 201);
  await call(subscribeTo, `/api/sessions/${session.session_id}/interactions`, { channel: 'voice' }, 201);
  const controller = new AbortController();
  const stream = await fetch(`${subscribeTo}/api/sessions/${session.session_id}/events?channel=voice`, { headers: { 'X-API-Key': apiKey }, signal: controller.signal });
  if (stream.status !== 200) throw new Error(`stream: ${stream.status}`);
  const content = `hello from ${new URL(publishTo).port} at ${Date.now()}`;
  await call(publishTo, `/api/sessions/${session.session_id}/messages`, { channel: 'chat', role: 'user', content, interaction_id: chat.interaction_id }, 200);
  const reader = stream.body!.getReader();
  const timer = setTimeout(() => controller.abort(), 15_000);
  let text = '';
  try {
    while (!text.includes(content)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  if (!text.includes(content)) throw new Error(`the stream on ${subscribeTo} did not carry the message published on ${publishTo}`);
  return `"${content}" published on :${new URL(publishTo).port}, received on the stream at :${new URL(subscribeTo).port}`;
}

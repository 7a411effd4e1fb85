/**
 * The fault suite's own infrastructure: a Redis and a PostgreSQL on free ports in a temporary
 * directory, and the web and worker roles as child processes, each of which can be stopped,
 * frozen (SIGSTOP), thawed and restarted.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync, chownSync, readdirSync, existsSync, createWriteStream, type WriteStream } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { freePort } from '../helpers/ports.js';
import { postgresUser } from '../../shared/cli/dev-postgres.js';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves once something accepts TCP connections on the port (or rejects after `ms`). */
export async function waitForPort(port: number, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on port ${port} after ${ms} ms`);
    await sleep(100);
  }
}

/** A child process that can be restarted with the same command. */
export class Proc {
  child?: ChildProcess;
  exits = 0;
  private log: WriteStream;
  private stopping = false;
  constructor(
    readonly name: string,
    private readonly cmd: string,
    private readonly args: string[],
    private readonly opts: { env?: NodeJS.ProcessEnv; cwd?: string; logFile: string },
  ) {
    this.log = createWriteStream(opts.logFile, { flags: 'a' });
  }
  start(): this {
    this.stopping = false;
    const child = spawn(this.cmd, this.args, { env: this.opts.env ?? process.env, cwd: this.opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.pipe(this.log, { end: false });
    child.stderr!.pipe(this.log, { end: false });
    child.on('exit', () => {
      if (this.child === child) this.child = undefined;
      if (!this.stopping) this.exits++;
    });
    this.child = child;
    return this;
  }
  get pid(): number {
    if (!this.child?.pid) throw new Error(`${this.name} is not running`);
    return this.child.pid;
  }
  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }
  signal(sig: NodeJS.Signals): void {
    this.child?.kill(sig);
  }
  /** Sends `sig` and waits for the exit (SIGKILL after `ms`). */
  async stop(sig: NodeJS.Signals = 'SIGTERM', ms = 15_000): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    this.stopping = true;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(sig);
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    await exited;
    clearTimeout(timer);
  }
  /** Lines the process logged so far (for counting log lines per outage). */
  get logFile(): string {
    return this.opts.logFile;
  }
}

/** Every process whose parent is `pid`, recursively (Postgres backends). */
function descendants(pid: number): number[] {
  let out: string;
  try {
    out = execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' });
  } catch {
    return [];
  }
  const kids = out.split('\n').filter(Boolean).map(Number);
  return kids.flatMap((k) => [k, ...descendants(k)]);
}

/** Freezes (or thaws) a process and all its descendants. */
export function freezeTree(pid: number, freeze: boolean): void {
  for (const p of [pid, ...descendants(pid)]) {
    try {
      process.kill(p, freeze ? 'SIGSTOP' : 'SIGCONT');
    } catch {
      // gone meanwhile
    }
  }
}

export interface Infra {
  dir: string;
  redis: Proc;
  redisPort: number;
  postgres: Proc;
  pgPort: number;
  databaseUrl: string;
  stop(): Promise<void>;
}

function postgresBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) if (existsSync(path.join(root, v, 'bin', 'initdb'))) return path.join(root, v, 'bin');
  throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql/*/bin');
}

/** initdb refuses root: run the server binaries as the postgres user (setpriv execs, so the pid is the server's). */
function asPostgresUser(cmd: string, args: string[]): [string, string[]] {
  if (process.getuid?.() !== 0) return [cmd, args];
  return ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', cmd, ...args]];
}

export async function startInfra(): Promise<Infra> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sb-faults-'));
  const [redisPort, pgPort] = [await freePort(), await freePort()];

  // Persistence on (AOF) as production requires: a restart must not lose queued jobs.
  mkdirSync(path.join(dir, 'redis'));
  const redis = new Proc('redis', 'redis-server', [
    '--port', String(redisPort), '--bind', '127.0.0.1', '--dir', path.join(dir, 'redis'),
    '--appendonly', 'yes', '--appendfsync', 'everysec', '--save', '', '--maxmemory-policy', 'noeviction',
  ], { logFile: path.join(dir, 'redis.log') }).start();

  const bin = postgresBin();
  const pgData = path.join(dir, 'pg');
  mkdirSync(pgData, { mode: 0o700 });
  if (process.getuid?.() === 0) {
    const { uid, gid } = postgresUser();
    chownSync(dir, uid, gid);
    chownSync(pgData, uid, gid);
  }
  const [initCmd, initArgs] = asPostgresUser(path.join(bin, 'initdb'), ['-D', pgData, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  execFileSync(initCmd, initArgs, { stdio: 'ignore' });
  const [pgCmd, pgArgs] = asPostgresUser(path.join(bin, 'postgres'), [
    '-D', pgData, '-p', String(pgPort), '-k', pgData, '-c', 'listen_addresses=127.0.0.1',
    '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=200',
  ]);
  const postgres = new Proc('postgres', pgCmd, pgArgs, { logFile: path.join(dir, 'postgres.log') }).start();
  await Promise.all([waitForPort(redisPort), waitForPort(pgPort)]);
  await sleep(500);
  execFileSync(path.join(bin, 'createdb'), ['-h', '127.0.0.1', '-p', String(pgPort), '-U', 'postgres', 'switchboard']);
  return {
    dir,
    redis,
    redisPort,
    postgres,
    pgPort,
    databaseUrl: `postgres://postgres@127.0.0.1:${pgPort}/switchboard`,
    async stop() {
      for (const p of [redis, postgres]) {
        if (p.child?.pid) freezeTree(p.child.pid, false);
        await p.stop('SIGINT');
      }
    },
  };
}

/** Waits until Postgres accepts connections again after a restart. */
export async function waitForPostgres(infra: Infra, ms = 30_000): Promise<void> {
  const bin = postgresBin();
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      execFileSync(path.join(bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(infra.pgPort), '-q']);
      return;
    } catch {
      if (Date.now() > deadline) throw new Error('Postgres did not come back');
      await sleep(100);
    }
  }
}

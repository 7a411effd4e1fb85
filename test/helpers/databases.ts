/**
 * Test databases: one template migrated once per set of migration files (its name is a hash of
 * them, so branches with different migrations never share one), cloned for every test file.
 *
 * Several runs (from different branches) share one PostgreSQL, so each run holds advisory locks
 * for as long as it lives (`openRun`): a shared one on its template, an exclusive one on its run id,
 * which names its clones. Clean-up drops a template, or a clone, only when it can take that lock
 * itself, i.e. when no live run uses it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import knexFactory from 'knex';
import { knexOptions, migrationsDir } from '../../shared/db/index.js';

/** The server tests use: DATABASE_URL's when set, else the local default. */
export function serverUrl(database: string): string {
  const url = new URL(process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  url.pathname = `/${database}`;
  return url.toString();
}

export function templateName(): string {
  const hash = createHash('sha256');
  for (const file of readdirSync(migrationsDir).sort()) {
    hash.update(file);
    hash.update(readFileSync(path.join(migrationsDir, file)));
  }
  return `sb_tpl_${hash.digest('hex').slice(0, 16)}`;
}

/** Advisory-lock namespaces (the first key of the two-key form; the second is hashtext(name)). */
const buildLock = 727274;
const templateLocks = 727275;
const runLocks = 727276;
/** Clones named before runs had ids; no test file lives this long, so an older one without connections is orphaned. */
const legacyCloneMaxAge = '1 hour';
/**
 * Runs of code from before these locks use a template without holding a lock; a template younger
 * than this is kept so such a run is not left without its template mid-run.
 */
const defaultTemplateGrace = '6 hours';

async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl('postgres') });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Creates and migrates the template database unless it exists (serialised by an advisory lock). */
export async function ensureTemplate(): Promise<string> {
  const name = templateName();
  await withAdmin(async (admin) => {
    await admin.query('select pg_advisory_lock($1)', [buildLock]);
    try {
      const found = await admin.query('select 1 from pg_database where datname = $1', [name]);
      if (found.rowCount) return;
      const building = `${name}_build`;
      await admin.query(`drop database if exists ${building} with (force)`);
      await admin.query(`create database ${building}`);
      const k = knexFactory(knexOptions(serverUrl(building), 2));
      try {
        await k.migrate.latest();
      } finally {
        await k.destroy();
      }
      // Renamed only once fully migrated, so a half-built template is never cloned.
      await admin.query(`alter database ${building} rename to ${name}`);
    } finally {
      await admin.query('select pg_advisory_unlock($1)', [buildLock]);
    }
  });
  return name;
}

export interface TestRun {
  template: string;
  runId: string;
  /** Ends the run: its locks go, so a later clean-up may drop what it left. */
  close(): Promise<void>;
}

/**
 * Starts a test run: holds its locks on a connection kept open until `close`, makes sure its
 * template exists, then drops what no live run uses (`dropUnused`).
 */
export async function openRun(): Promise<TestRun> {
  const template = templateName();
  const runId = randomBytes(4).toString('hex');
  const holder = new pg.Client({ connectionString: serverUrl('postgres') });
  await holder.connect();
  // Taken before the template is built or looked up, so no clean-up can drop it under this run.
  await holdRunLocks(holder, template, runId);
  await ensureTemplate();
  await dropUnused(template);
  return { template, runId, close: () => holder.end() };
}

/** Takes a run's locks on `client`: session-level, they last as long as its connection. */
export async function holdRunLocks(client: pg.Client, template: string, runId: string): Promise<void> {
  await client.query('select pg_advisory_lock_shared($1, hashtext($2))', [templateLocks, template]);
  await client.query('select pg_advisory_lock($1, hashtext($2))', [runLocks, runId]);
}

/**
 * Names of the databases `dropUnused` may consider (the test ones only), with their age checks. A
 * database another run drops meanwhile has no files left: missing_ok makes it "not old", not an error.
 */
const testDatabases = async (admin: pg.Client, templateGrace: string) =>
  (await admin.query<{ datname: string; legacy_stale: boolean; past_grace: boolean }>(
    `select datname,
            datname ~ '^sb_test_[0-9a-f]{12}$'
              and coalesce((pg_stat_file('base/' || oid || '/PG_VERSION', true)).modification < now() - $1::interval, false)
              and not exists (select 1 from pg_stat_activity a where a.datname = d.datname) as legacy_stale,
            coalesce((pg_stat_file('base/' || oid || '/PG_VERSION', true)).modification < now() - $2::interval, false) as past_grace
       from pg_database d where datname like 'sb\\_tpl\\_%' or datname like 'sb\\_test\\_%'`,
    [legacyCloneMaxAge, templateGrace],
  )).rows;

/**
 * Drops every test database no live run uses: templates of other hashes nobody holds, half-built
 * templates (`_build`, none is being built while the build lock is held), clones of ended runs,
 * and clones from before run ids that are old and unused. Returns the names dropped.
 */
export async function dropUnused(keepTemplate: string, templateGrace = defaultTemplateGrace): Promise<string[]> {
  const dropped: string[] = [];
  await withAdmin(async (admin) => {
    await admin.query('select pg_advisory_lock($1)', [buildLock]);
    try {
      for (const { datname, legacy_stale, past_grace } of await testDatabases(admin, templateGrace)) {
        const run = /^sb_test_([0-9a-f]{8})_[0-9a-f]+$/.exec(datname)?.[1];
        let lock: [number, string] | undefined;
        if (datname === keepTemplate) continue;
        else if (datname.endsWith('_build')) lock = undefined;
        else if (/^sb_tpl_[0-9a-f]+$/.test(datname)) {
          if (!past_grace) continue;
          lock = [templateLocks, datname];
        }
        else if (run) lock = [runLocks, run];
        else if (!legacy_stale) continue;
        if (lock && !(await admin.query('select pg_try_advisory_lock($1, hashtext($2)) as ok', lock)).rows[0].ok) continue;
        try {
          // Without force: a database someone is connected to is in use after all, and stays.
          await admin.query(`drop database if exists ${datname}`);
          dropped.push(datname);
        } catch (err) {
          if (!/being accessed by other users/.test(String(err))) throw err;
        } finally {
          if (lock) await admin.query('select pg_advisory_unlock($1, hashtext($2))', lock);
        }
      }
    } finally {
      await admin.query('select pg_advisory_unlock($1)', [buildLock]);
    }
  });
  return dropped;
}

/**
 * A fresh database cloned from the template, named after the run that owns it; returns its name.
 * Without a run (the benchmarks), the clone is only dropped by clean-up once old and unused.
 */
export async function cloneTemplate(template: string, runId?: string): Promise<string> {
  const name = runId ? `sb_test_${runId}_${randomBytes(4).toString('hex')}` : `sb_test_${randomBytes(6).toString('hex')}`;
  await withAdmin(async (admin) => {
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.query(`create database ${name} template ${template}`);
        return;
      } catch (err) {
        // Concurrent clones of one template can briefly see each other as "other users" of it.
        if (attempt >= 20 || !/being accessed by other users/.test(String(err))) throw err;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  });
  return name;
}

export async function dropDatabase(name: string): Promise<void> {
  await withAdmin((admin) => admin.query(`drop database if exists ${name} with (force)`));
}

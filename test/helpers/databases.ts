/**
 * Test databases: one template migrated once per set of migration files (its name is a hash of
 * them, so branches with different migrations never share one), cloned for every test file.
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
    await admin.query('select pg_advisory_lock(727274)');
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
      await admin.query('select pg_advisory_unlock(727274)');
    }
  });
  return name;
}

/** A fresh database cloned from the template; returns its name. */
export async function cloneTemplate(template: string): Promise<string> {
  const name = `sb_test_${randomBytes(6).toString('hex')}`;
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

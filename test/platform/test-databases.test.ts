import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { dropUnused, holdRunLocks, serverUrl } from '../helpers/databases.js';

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const admin = new pg.Client({ connectionString: serverUrl('postgres') });
await admin.connect();
const made: string[] = [];
const create = async (name: string) => {
  await admin.query(`create database ${name}`);
  made.push(name);
  return name;
};
const exists = async (name: string) => (await admin.query('select 1 from pg_database where datname = $1', [name])).rowCount === 1;
const otherRun = new pg.Client({ connectionString: serverUrl('postgres') });

afterAll(async () => {
  await otherRun.end().catch(() => undefined);
  for (const name of made) await admin.query(`drop database if exists ${name} with (force)`);
  await admin.end();
});

describe('clean-up of test databases', () => {
  it('drops templates, half-built templates and clones no live run holds, and keeps those a run holds', async () => {
    const [liveRun, endedRun] = [hex(4), hex(4)];
    const stale = await create(`sb_tpl_${hex(8)}`);
    const halfBuilt = await create(`sb_tpl_${hex(8)}_build`);
    const inUse = await create(`sb_tpl_${hex(8)}`);
    const liveClone = await create(`sb_test_${liveRun}_${hex(4)}`);
    const endedClone = await create(`sb_test_${endedRun}_${hex(4)}`);
    // Another run (another branch's `npm test`), alive while the clean-up runs.
    await otherRun.connect();
    await holdRunLocks(otherRun, inUse, liveRun);

    const dropped = await dropUnused(inject('templateDatabase'), '0 seconds');

    expect(dropped).toEqual(expect.arrayContaining([stale, halfBuilt, endedClone]));
    expect(dropped).not.toContain(inUse);
    expect(dropped).not.toContain(liveClone);
    expect(await exists(stale)).toBe(false);
    expect(await exists(halfBuilt)).toBe(false);
    expect(await exists(endedClone)).toBe(false);
    expect(await exists(inUse)).toBe(true);
    expect(await exists(liveClone)).toBe(true);
    // This run's own template and its own clone (this file's database) are kept.
    expect(await exists(inject('templateDatabase'))).toBe(true);
    expect(await exists(new URL(process.env.DATABASE_URL!).pathname.slice(1))).toBe(true);

    // Once that run ends, the next clean-up drops what it held.
    await otherRun.end();
    const later = await dropUnused(inject('templateDatabase'), '0 seconds');
    expect(later).toEqual(expect.arrayContaining([inUse, liveClone]));
    expect(await exists(inUse)).toBe(false);
  });

  it('keeps an unheld template younger than the grace period', async () => {
    const young = await create(`sb_tpl_${hex(8)}`);
    expect(await dropUnused(inject('templateDatabase'))).not.toContain(young);
    expect(await exists(young)).toBe(true);
  });
});

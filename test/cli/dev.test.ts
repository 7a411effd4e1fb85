/**
 * `npm run dev` in production: the refusal's first line says that the command and its demo are for
 * development, before it starts anything or lists the production settings it lacks.
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const dev = path.resolve(import.meta.dirname, '../../shared/cli/dev.ts');

describe('npm run dev with NODE_ENV=production', () => {
  it.each([[['--demo']], [[]]])('args %j: refused, the first line saying it is for development', (args) => {
    // Nothing else set: a production start would name DATABASE_URL, PUBLIC_URL and the rest first.
    const run = spawnSync(process.execPath, ['--import', 'tsx', dev, ...args], { env: { PATH: process.env.PATH!, NODE_ENV: 'production' }, encoding: 'utf8', timeout: 30_000 });
    expect(run.status).toBe(1);
    const [first] = run.stderr.trim().split('\n');
    expect(first).toMatch(/^npm run dev and its --demo data are for development only/);
    expect(run.stderr).not.toMatch(/required when NODE_ENV=production/);
    expect(run.stdout).not.toMatch(/starting|switchboard is running/);
  });
});

/**
 * The container image every role runs from, built and run as an operator would: `npm run test:image`
 * (test/image/run.ts) as a child process, so `npm test` and the command an operator runs by hand are one
 * test. It builds the image (on a local Debian + Node 24 base where no image registry is reachable),
 * prints its size, and runs migrate, web and worker from it against the test PostgreSQL and Redis.
 */
// needs: podman runc debootstrap
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { podman, root } from './podman.js';

describe('the container image', () => {
  it('builds, and migrate, web and worker run from it in production mode', { timeout: 30 * 60_000 }, async () => {
    // A tag of this run's own: runs of several branches may share the machine's podman.
    const tag = `localhost/switchboard:test-${randomBytes(4).toString('hex')}`;
    // Niced: the image build is the heaviest thing the suite does, and other tests may share the machine.
    const child = spawn('nice', ['-n', '10', process.execPath, '--import', 'tsx', 'test/image/run.ts'], {
      cwd: root,
      // The PostgreSQL server of this run (the file's own database is a clone on it).
      env: { ...process.env, TEST_IMAGE_TAG: tag, TEST_ADMIN_DATABASE_URL: process.env.TEST_ADMIN_DATABASE_URL ?? process.env.DATABASE_URL },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    // Untagged; the build's cached layers stay for the next run.
    podman(['rmi', tag], { allowFail: true });
    console.log(out);
    if (code !== 0) console.log(err.split('\n').slice(-40).join('\n'));
    expect(out).toMatch(/^image \S+: \d+ MB/m);
    expect(out).toMatch(/^\d+ passed, 0 failed$/m);
    expect(out).not.toMatch(/✗/);
    expect(code).toBe(0);
  });
});

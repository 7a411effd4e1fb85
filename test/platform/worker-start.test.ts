/**
 * The worker role as a process: its start-up line names the /metrics it serves (scrapers and
 * bench:sessions read it), also when WORKER_METRICS_PORT=0 leaves the port to the system, and a
 * metrics port it cannot bind stops start-up with the reason.
 */
import { spawn, spawnSync } from 'node:child_process';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { stopChildren } from '../../shared/cli/roles.js';

const root = path.resolve(import.meta.dirname, '../..');
const args = ['--import', 'tsx', path.join(root, 'workers/main.ts')];

describe('worker start-up', () => {
  it('with WORKER_METRICS_PORT=0, the "workers running" line names the port bound, and /metrics answers there', async () => {
    // The start-up line is a log line, and tests log nothing unless LOG_LEVEL says so.
    const worker = spawn(process.execPath, args, { cwd: root, env: { ...process.env, WORKER_METRICS_PORT: '0', LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: worker.stdout! }).on('line', (l) => l.includes('workers running') && resolve(l));
        worker.once('exit', (code) => reject(new Error(`worker exited (${code}) before it ran`)));
      });
      const url = JSON.parse(line).metrics as string;
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      expect(new URL(url).port).not.toBe('0');
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('queue_job_duration_seconds');
    } finally {
      await stopChildren([worker]);
    }
  }, 60_000);

  it('a metrics port already taken stops start-up: exit 1 and the reason in one line', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = taken.address() as AddressInfo;
      const run = spawnSync(process.execPath, args, { cwd: root, env: { ...process.env, WORKER_METRICS_PORT: String(port) }, encoding: 'utf8', timeout: 60_000 });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(`start-up failed: listen EADDRINUSE: address already in use 127.0.0.1:${port}`);
    } finally {
      taken.close();
    }
  }, 60_000);
});

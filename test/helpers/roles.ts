/**
 * Roles of the platform as processes of their own (api/main.ts, workers/main.ts), as they run in
 * production, against this test file's database and queue prefix (inherited environment).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { testApiKey } from './platform.js';

export interface Role {
  child: ChildProcess;
  /** The line that said the role is ready. */
  line: string;
  /** Every stdout line so far (JSON log lines). */
  lines: string[];
}

/**
 * Starts a role with `env` on top of this process's environment (application_name `name` on its
 * Postgres connections); resolves once a line matches `ready`.
 */
export function startRole(entry: string, name: string, ready: RegExp, env: Record<string, string> = {}): Promise<Role> {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', API_KEYS: testApiKey, WORKER_METRICS_PORT: '0', PGAPPNAME: name, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start`)), 90_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      if (ready.test(line)) {
        clearTimeout(timer);
        resolve({ child, line, lines });
      }
    });
    child.on('exit', (code) => reject(new Error(`${name} exited with ${code}`)));
  });
}

/** Stops a role with SIGTERM and waits for it to exit (SIGKILL after `graceMs`). */
export async function stopRole(role: Role, graceMs = 10_000): Promise<void> {
  if (role.child.exitCode !== null || role.child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => role.child.once('exit', () => resolve()));
  role.child.kill('SIGTERM');
  const timer = setTimeout(() => role.child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

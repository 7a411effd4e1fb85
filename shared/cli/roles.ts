/** Runs the web and worker roles as child processes and stops them together (npm run dev, npm start). */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const compiled = import.meta.url.endsWith('.js');

/**
 * Node flags of the roles (the Procfile repeats them). A 32 MB young generation: a busy API holds
 * many short-lived request, job and SSE objects at once, and the default 16 MB semi-space made it
 * scavenge so often that it fell behind. bench:sessions at 500 msg/s, alternating runs: API CPU
 * 19.5 and 22.1 s without, 14.7 and 16.6 s with; p50 2.7 s and 19.6 s without, 15 and 60 ms with.
 * Its cost is idle memory. One run each way with 4 MB instead: 10,000 idle streams took 266 MB RSS
 * instead of 332 (bench:idle-streams, compiled), but bench:sessions at 500 msg/s after the first
 * 10 s had p50 4.1 and p99 33.0 ms instead of 2.7 and 12.9 ms, and API CPU 0.85 instead of 0.78 ms
 * per message.
 */
export const roleNodeFlags = ['--max-semi-space-size=32'];

/** Spawns a role's entry file (api/main, workers/main or api/tools-server/main) with the given environment, the roles' Node flags and extra ones (e.g. --cpu-prof). */
export function spawnRole(entry: 'api/main' | 'workers/main' | 'api/tools-server/main', env: NodeJS.ProcessEnv, extraNodeFlags: string[] = []): ChildProcess {
  const args = compiled ? [path.join(root, `${entry}.js`)] : ['--import', 'tsx', path.join(root, `${entry}.ts`)];
  return spawn(process.execPath, [...roleNodeFlags, ...extraNodeFlags, ...args], { env, stdio: 'inherit' });
}

/** Sends SIGTERM to each child and resolves when all have exited (SIGKILL after the grace period). */
export async function stopChildren(children: ChildProcess[], graceMs = 20_000): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
          child.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
}

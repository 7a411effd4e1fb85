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
 * per message. Measured again with one session lane, alternating 32 / 8 / 32 / 8 MB on a quiet
 * machine (BENCH_COLD_SECONDS=0, 12 s steps): 8 MB takes 10,000 idle streams to 235 MB instead of
 * 270-288, but p99 at 1,000 msg/s was 53.6 and 43.4 ms against 24.4 and 34.8, at 2,000 msg/s 92.7
 * and 95.1 against 43.2 and 62.5, and 2,500 msg/s failed in both 8 MB runs (API CPU 0.32-0.36
 * against 0.24-0.27 ms per message), so 32 stays.
 * --expose-gc gives shared/idle-memory.ts the gc() with which a quiet role shrinks its young
 * generation back to 1 MB, so the 32 MB cost nothing once the load is gone.
 */
export const roleNodeFlags = ['--max-semi-space-size=32', '--expose-gc'];

/** Spawns a role's entry file (api/main, workers/main, api/tools-server/main or api/email-server/main) with the given environment, the roles' Node flags and extra ones (e.g. --cpu-prof). */
export function spawnRole(entry: 'api/main' | 'workers/main' | 'api/tools-server/main' | 'api/email-server/main', env: NodeJS.ProcessEnv, extraNodeFlags: string[] = []): ChildProcess {
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

/** Runs the web and worker roles as child processes and stops them together (npm run dev, npm start). */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const compiled = import.meta.url.endsWith('.js');

/** Spawns a role's entry file (api/main, workers/main, api/tools-server/main or api/email-server/main) as a plain `node` process with the given environment; extra Node flags only for profiling (e.g. --cpu-prof). */
export function spawnRole(entry: 'api/main' | 'workers/main' | 'api/tools-server/main' | 'api/email-server/main', env: NodeJS.ProcessEnv, extraNodeFlags: string[] = []): ChildProcess {
  const args = compiled ? [path.join(root, `${entry}.js`)] : ['--import', 'tsx', path.join(root, `${entry}.ts`)];
  return spawn(process.execPath, [...extraNodeFlags, ...args], { env, stdio: 'inherit' });
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

/** npm start: production on one machine — migrations, then the web and worker roles (the Procfile splits them). */
import { closeDb, migrateLatest } from '../db/index.js';
import { config, ConfigError } from '../config.js';
import { spawnRole, stopChildren } from './roles.js';
import { loadDotEnv } from '../env-file.js';

// `.env` of the working directory for what the environment leaves unset; the roles inherit the result.
loadDotEnv();
try {
  config();
  await migrateLatest();
  await closeDb();
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
}
const children = [spawnRole('api/main', process.env), spawnRole('workers/main', process.env)];
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void stopChildren(children).then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
for (const child of children) child.on('exit', (code) => { if (!stopping) { console.error(`a role exited (${code}); stopping`); stop(); } });

/** Release role: applies pending migrations (Procfile `release:`). */
import { closeDb, migrateLatest } from '../db/index.js';
import { config, ConfigError } from '../config.js';

try {
  config();
  const applied = await migrateLatest();
  console.log(applied.length ? `applied ${applied.length} migration(s): ${applied.join(', ')}` : 'migrations: already current');
  await closeDb();
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
}

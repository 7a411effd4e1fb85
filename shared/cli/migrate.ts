/** Release role: applies pending migrations (Procfile `release:`, the image's `migrate`); needs only DATABASE_URL. */
import { closeDb, migrateLatest } from '../db/index.js';
import { configForMigrations, ConfigError } from '../config.js';

try {
  // The release step needs the database and nothing else (no sign-in, CRM or API credentials).
  configForMigrations();
  const applied = await migrateLatest();
  console.log(applied.length ? `applied ${applied.length} migration(s): ${applied.join(', ')}` : 'migrations: already current');
  await closeDb();
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
}

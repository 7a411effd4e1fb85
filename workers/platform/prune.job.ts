import type { Handler } from '../runner.js';
import { pruneExpired } from '../../shared/prune-expired.sql.js';
import type { jobDefinitions } from '../../shared/queues.js';

/** Deletes the rows past their retention (RETENTION_*); the counts are the job's result. */
export const pruneJob: Handler<(typeof jobDefinitions)['platform.prune']['schema']> = () => pruneExpired();

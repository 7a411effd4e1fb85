/**
 * Once per `npm test`: hold this run's locks, make sure the migrated template exists, drop the test
 * databases no live run uses; at the end, release the locks.
 */
import { openRun } from './databases.js';

export default async function setup({ provide }: { provide: (key: string, value: unknown) => void }) {
  const run = await openRun();
  provide('templateDatabase', run.template);
  provide('testRunId', run.runId);
  return () => run.close();
}

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabase: string;
    testRunId: string;
  }
}

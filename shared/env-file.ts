/** The `.env` file of `npm run dev` and `npm start`, read in code so no launcher has to pass a Node flag. */
import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * Adds the variables of `file` (default `.env` in the working directory) to process.env; a variable
 * already set in the environment wins. Returns the file read, or undefined when there is none.
 */
export function loadDotEnv(file = path.resolve('.env')): string | undefined {
  if (!existsSync(file)) return undefined;
  process.loadEnvFile(file);
  return file;
}

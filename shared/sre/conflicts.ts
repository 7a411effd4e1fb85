import { isUniqueViolation } from '../db/index.js';
import { ConflictError } from '../errors.js';

/** Runs a write; a unique violation becomes a 409 with this message. */
export async function conflictOnDuplicate<T>(message: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError(message);
    throw err;
  }
}

/**
 * A CommonJS package required on its first use instead of imported at start-up: for the clients of
 * outside services that an API process may never call (each holds megabytes of heap, and more RSS,
 * for the life of the process once loaded).
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export interface LoadedOnFirstUse<T> {
  /** The package, required now if it was not yet. */
  (): T;
  /** The package if something has required it already, else undefined (an error cannot be one of its classes before then). */
  ifLoaded(): T | undefined;
}

/** `name` (a package with a CommonJS entry), required on the first call. */
export function loadOnFirstUse<T>(name: string): LoadedOnFirstUse<T> {
  let loaded: T | undefined;
  return Object.assign(() => (loaded ??= require(name) as T), { ifLoaded: () => loaded });
}

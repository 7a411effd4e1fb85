/** Once per `npm test`: make sure the migrated template database exists. */
import { ensureTemplate } from './databases.js';

export default async function setup({ provide }: { provide: (key: string, value: unknown) => void }) {
  provide('templateDatabase', await ensureTemplate());
}

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabase: string;
  }
}

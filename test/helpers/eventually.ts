/**
 * The one polling helper of the tests. Use it for state that has no event to wait on (a row, a
 * recorded request); for "nothing more happened", wait for a sentinel instead (see `sse.ts`).
 */

/**
 * Calls `check` until it returns a value other than undefined, null or false, and returns that value.
 * Fails after `ms` naming what was awaited (`what`, else the check's source) and the last value seen.
 */
export async function eventually<T>(check: () => Promise<T | undefined | null | false> | T | undefined | null | false, ms = 10_000, what?: string): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    last = await check();
    if (last !== undefined && last !== null && last !== false) return last as T;
    if (Date.now() > deadline) {
      const awaited = what ?? check.toString().replace(/\s+/g, ' ').slice(0, 200);
      throw new Error(`timed out after ${ms} ms waiting for ${awaited}; last value: ${JSON.stringify(last)?.slice(0, 500)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

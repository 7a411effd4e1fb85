/** Long-lived responses (SSE) of this process, so shutdown can end them before the server closes. */
const open = new Set<() => void>();

/** Tracks a stream; returns the function that forgets it (call it when the stream ends on its own). */
export function trackStream(end: () => void): () => void {
  open.add(end);
  return () => open.delete(end);
}

/** Ends every open stream (clients reconnect elsewhere and replay what they missed). */
export function endAllStreams(): void {
  for (const end of [...open]) end();
  open.clear();
}

export function openStreamCount(): number {
  return open.size;
}

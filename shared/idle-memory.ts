/**
 * Gives the young generation back once a role has been quiet for a while (issue 18 point 5).
 *
 * The roles run with a 32 MB semi-space (see roleNodeFlags): under load V8 grows the young
 * generation to 64 MB, and it resizes it only at a scavenge. A quiet process (10,000 open streams,
 * nothing published) allocates too little to ever need one, so it kept the 64 MB: 270-288 MB RSS at
 * 10,000 idle streams. A scavenge forced while the event loop is quiet lets V8 see the low allocation
 * rate and shrink the young generation to 1 MB (sometimes only at the second or third: the first
 * copies the survivors of the last burst, the next promotes them, which V8 counts as allocation).
 *
 * Only after 30 s of quiet: the young generation grows back within the first scavenges of the next
 * burst, but those promote short-lived objects early, so a lull between bursts should not shrink
 * it. (bench:sessions --ramp leaves switchboard quiet ~20 s between its steps while nchan runs.)
 * Needs the gc() that --expose-gc gives (the roles' Node flags); without it (tests, a bare `node`)
 * this does nothing.
 */
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';

type Gc = (options?: { type?: 'minor' | 'major' }) => void;

/** The young generation starts at 1 MB; above this it has grown under load. */
const grownAbove = 4 * 2 ** 20;

export interface QuietOptions {
  /** How often the event loop's utilisation is sampled. */
  everyMs?: number;
  /** Utilisation below which a sample counts as quiet (the keep-alives to 10,000 streams take ~220 ms every 15 s: 4 % of a sample). */
  quietBelow?: number;
  /** How long every sample must have been quiet before the scavenges start. */
  quietForMs?: number;
}

/** The roles' settings: bench:idle-streams waits quietForMs and four samples before it reads memory. */
export const quietDefaults = { everyMs: 5_000, quietBelow: 0.1, quietForMs: 30_000 } as const satisfies Required<QuietOptions>;

export function youngGenerationBytes(): number {
  return v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
}

/** Forces a scavenge per sample once the process has been quiet for quietForMs and while its young generation is larger than it started; returns a function that stops it. */
export function returnYoungGenerationWhenQuiet(options: QuietOptions = {}): () => void {
  const { everyMs, quietBelow, quietForMs } = { ...quietDefaults, ...options };
  const gc = (globalThis as { gc?: Gc }).gc;
  if (typeof gc !== 'function') return () => {};
  let previous = performance.eventLoopUtilization();
  let quietSince = performance.now();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, previous);
    previous = now;
    if (utilization >= quietBelow) quietSince = performance.now();
    else if (performance.now() - quietSince >= quietForMs && youngGenerationBytes() > grownAbove) gc({ type: 'minor' });
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

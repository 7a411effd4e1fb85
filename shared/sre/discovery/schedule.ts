/** When the discovery tick fires: often enough to catch every DISCOVERY_INTERVAL slot, never busier than needed. */

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/**
 * node-cron expression (with seconds) of the discovery tick. Whole-minute intervals tick once a
 * minute; others tick every gcd(interval, 60) seconds. Each tick enqueues the slot's job id, so
 * extra ticks within a slot (and other processes' ticks) are dropped by the queue.
 */
export function discoveryCron(intervalSeconds: number): string {
  return intervalSeconds % 60 === 0 ? '0 * * * * *' : `*/${gcd(intervalSeconds, 60)} * * * * *`;
}

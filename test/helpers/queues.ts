/**
 * "Nothing was queued" without sleeping: a listener on every queue records the jobs added, and a
 * sentinel (a custom event published on each queue's event stream) proves that each listener has read
 * every event written before it. "The earlier work is done": no queue has a job waiting or running.
 */
import { QueueEvents, QueueEventsProducer, type QueueEventsListener } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { config } from '../../shared/config.js';
import { queue, registry } from '../../shared/queues.js';
import { blockingConnection } from '../../shared/redis.js';
import { eventually } from './eventually.js';

const sentinelEvent = 'test-sentinel';
/** The listener type of the sentinel, BullMQ's way of typing a custom event. */
interface SentinelListener extends QueueEventsListener {
  [sentinelEvent]: (args: { id?: string }, id: string) => void;
}

export class QueueWatch {
  /** `queue:jobId` of every job added since the watch started (or since `added.length = 0`). */
  readonly added: string[] = [];
  private constructor(private readonly listeners: Array<{ name: string; events: QueueEvents; producer: QueueEventsProducer }>) {}

  static async start(): Promise<QueueWatch> {
    const prefix = config().queues.prefix;
    const listeners = Object.keys(registry.queues).map((name) => ({
      name,
      events: new QueueEvents(name, { connection: blockingConnection(), prefix }),
      // Unbounded like the listeners: on a busy machine a bounded command timeout would fail the test, not the code.
      producer: new QueueEventsProducer(name, { connection: blockingConnection(), prefix }),
    }));
    const watch = new QueueWatch(listeners);
    // 'added' is written once per new job (a retry of an earlier job adds nothing).
    for (const { name, events } of listeners) events.on('added', ({ jobId }) => watch.added.push(`${name}:${jobId}`));
    await Promise.all(listeners.map((l) => l.events.waitUntilReady()));
    // A listener reads only what is written after its first read of the stream, which "ready" does not
    // wait for: it is live once a sentinel, published again until one arrives, comes back.
    await watch.sentinel(10_000, 100);
    return watch;
  }

  /**
   * Resolves once every listener has received a sentinel published now, so every job added before this
   * call is in `added`. `again`: publish it again every so many ms until it arrives (a listener not yet reading).
   */
  async sentinel(ms = 10_000, again?: number): Promise<void> {
    const id = randomUUID();
    await Promise.all(
      this.listeners.map(async ({ name, events, producer }) => {
        const seen = new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no sentinel back from queue ${name} within ${ms} ms`)), ms);
          const onEvent = (args: { id?: string }) => {
            if (args.id !== id) return;
            clearTimeout(timer);
            events.off<SentinelListener>(sentinelEvent, onEvent);
            resolve();
          };
          events.on<SentinelListener>(sentinelEvent, onEvent);
        });
        await producer.publishEvent({ eventName: sentinelEvent, id });
        const repeat = again ? setInterval(() => void producer.publishEvent({ eventName: sentinelEvent, id }).catch(() => {}), again) : undefined;
        await seen.finally(() => clearInterval(repeat));
      }),
    );
  }

  close(): Promise<unknown> {
    return Promise.all(this.listeners.flatMap((l) => [l.events.close(), l.producer.close()]));
  }
}

/** Resolves once no queue has a job waiting or running (the work sent so far is done, its rows written). */
export async function queuesIdle(ms = 20_000): Promise<void> {
  await eventually(
    async () => {
      const counts = await Promise.all(Object.keys(registry.queues).map((name) => queue(name).getJobCounts('waiting', 'active', 'prioritized', 'waiting-children')));
      return counts.every((c) => Object.values(c).every((n) => n === 0));
    },
    ms,
    'every queue idle (nothing waiting or running)',
  );
}

/**
 * A client process of bench:idle-streams: holds its share of the idle SSE streams, so no single
 * process needs all the file descriptors. Driven over IPC by idle-streams.ts:
 *   {streams: [{url, key}]}  the streams it owns (once)
 *   {openUpTo: n}            opens its streams up to the n-th; answers {opened, failed, firstError}
 */
import { subscribeSse, type SseSubscription } from './sse-subscriber.js';

interface Stream {
  url: string;
  key: string;
}

let streams: Stream[] = [];
const open: SseSubscription[] = [];
let dropped = 0;
let failed = 0;
let firstError: string | undefined;
/** Streams being opened at once: enough to go fast, few enough not to look like a flood to the API's accept queue. */
const concurrency = 64;

process.on('message', async (msg: { streams?: Stream[]; openUpTo?: number }) => {
  if (msg.streams) streams = msg.streams;
  if (msg.openUpTo !== undefined) {
    const target = Math.min(msg.openUpTo, streams.length);
    const workers = Array.from({ length: concurrency }, async () => {
      while (open.length < target) {
        const { url, key } = streams[open.length]!;
        const sub = subscribeSse(url, { 'X-API-Key': key }, () => undefined, () => dropped++);
        open.push(sub);
        await sub.opened.catch((err: Error) => {
          failed++;
          firstError ??= err.message;
        });
      }
    });
    await Promise.all(workers);
    process.send!({ opened: open.length - failed, failed, dropped, firstError });
  }
});
process.on('disconnect', () => {
  for (const s of open) s.close();
  process.exit(0);
});

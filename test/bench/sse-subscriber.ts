/**
 * A lean SSE subscriber for benchmarks: one node:http GET per stream, parsed by eventsource-parser
 * (the parser the `eventsource` package itself uses). The load generator shares the machine's two
 * cores with the system it measures; with `eventsource` (fetch, web streams) bench:sessions' load
 * generator used 6.6-8.4 CPU-s a run, with this 3.9-5.7 s. No reconnection: a benchmark counts a
 * dropped stream as lost deliveries instead of hiding it. The tests keep using `eventsource`.
 */
import http from 'node:http';
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface SseSubscription {
  /** Resolves once the server answered 200 with the event stream. */
  opened: Promise<void>;
  close(): void;
}

/** Opens `url` as an event stream and calls `onEvent` for every event; `onClosed` if the server ends it. */
export function subscribeSse(
  url: string,
  headers: Record<string, string>,
  onEvent: (event: EventSourceMessage) => void,
  onClosed: (why: string) => void = () => undefined,
): SseSubscription {
  let closing = false;
  let ended = false;
  // A reset stream may report both the response's close and the request's error: count it once.
  const end = (why: string) => {
    if (closing || ended) return;
    ended = true;
    onClosed(why);
  };
  const parser = createParser({ onEvent });
  const req = http.get(url, { agent: false, headers: { Accept: 'text/event-stream', ...headers } });
  const opened = new Promise<void>((resolve, reject) => {
    req.once('response', (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`${url}: HTTP ${res.statusCode}`));
        return;
      }
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => parser.feed(chunk));
      res.once('close', () => end('stream ended'));
      resolve();
    });
    req.once('error', (err) => {
      end(err.message);
      reject(err);
    });
  });
  opened.catch(() => undefined);
  return {
    opened,
    close() {
      closing = true;
      req.destroy();
    },
  };
}

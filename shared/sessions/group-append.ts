/**
 * Group commit of message appends for the stream writer (deliver.ts): the appends of concurrently
 * running lanes are written by one statement (messages.store.ts appendMessages).
 */
import { config } from '../config.js';
import { appendMessages, type AppendMessage } from './messages.store.js';
import { appendMessageOnce, type KeyedAppendOutcome } from './idempotency.js';

interface PendingAppend {
  /** Consecutive messages of one session, in stream order. */
  run: AppendMessage[];
  settle(outcomes: Promise<KeyedAppendOutcome[]>): void;
}

/** Most messages one statement appends. */
const maxGroup = 256;

/**
 * Group commit of message appends. The lanes of a worker process run concurrently, each handing
 * over runs of a session's consecutive messages; runs that arrive while a statement runs are
 * written together by the next one (one statement, one commit). Under load the Postgres cost per
 * message falls instead of every lane queueing behind its own round trip.
 */
export class GroupAppender {
  private waiting: PendingAppend[] = [];
  private draining = false;

  append(message: AppendMessage): Promise<KeyedAppendOutcome> {
    return this.appendRun([message]).then((outcomes) => outcomes[0]!);
  }

  /** Appends consecutive messages of one session in order; one outcome per message. */
  appendRun(run: AppendMessage[]): Promise<KeyedAppendOutcome[]> {
    return new Promise((resolve) => {
      this.waiting.push({ run, settle: resolve });
      if (!this.draining) {
        this.draining = true;
        // Appends of lanes woken in the same I/O phase join the first statement.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.waiting.length) {
      const group = this.takeGroup();
      const messages = group.flatMap((p) => p.run);
      const maxHistory = config().sessions.maxHistory;
      const outcomes = await appendMessages(messages, maxHistory).then(
        (all) => {
          let at = 0;
          return group.map((p) => Promise.resolve(all.slice(at, (at += p.run.length))));
        },
        // One message's fault (say a repeated idempotency key) must not fail the others: one at a time, each run in order.
        () =>
          group.map(async (p) => {
            const done: KeyedAppendOutcome[] = [];
            for (const m of p.run) done.push(await appendMessageOnce(m, maxHistory));
            return done;
          }),
      );
      group.forEach((p, i) => p.settle(outcomes[i]!));
      await Promise.allSettled(outcomes);
    }
    this.draining = false;
  }

  /**
   * The oldest waiting runs, one per session (a later run of a session waits for the next group,
   * so a session's sequences follow the order of its runs), up to about maxGroup messages.
   */
  private takeGroup(): PendingAppend[] {
    const sessions = new Set<string>();
    const group: PendingAppend[] = [];
    const rest: PendingAppend[] = [];
    let size = 0;
    for (const p of this.waiting) {
      const session = p.run[0]!.session_id;
      if ((size === 0 || size + p.run.length <= maxGroup) && !sessions.has(session)) {
        sessions.add(session);
        group.push(p);
        size += p.run.length;
      } else rest.push(p);
    }
    this.waiting = rest;
    return group;
  }
}

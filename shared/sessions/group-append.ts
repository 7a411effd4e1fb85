/**
 * Group commit of message appends for the stream writer (deliver.ts): the appends of concurrently
 * running lanes are written by one statement (messages.store.ts appendMessages).
 */
import { config } from '../config.js';
import { appendMessages, type AppendMessage } from './messages.store.js';
import { appendMessageOnce, type KeyedAppendOutcome } from './idempotency.js';

interface PendingAppend {
  message: AppendMessage;
  settle(outcome: Promise<KeyedAppendOutcome>): void;
}

/** Most messages one statement appends. */
const maxGroup = 64;

/**
 * Group commit of message appends. The lanes of a worker process run concurrently, each with one
 * message in flight; appends that arrive while a statement runs are written together by the next
 * one (one statement, one commit, messages of distinct sessions). Under load the Postgres cost per
 * message falls instead of every lane queueing behind its own round trip.
 */
export class GroupAppender {
  private waiting: PendingAppend[] = [];
  private draining = false;

  append(message: AppendMessage): Promise<KeyedAppendOutcome> {
    return new Promise((resolve) => {
      this.waiting.push({ message, settle: resolve });
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
      const messages = group.map((p) => p.message);
      const maxHistory = config().sessions.maxHistory;
      const outcomes = await appendMessages(messages, maxHistory).then(
        (all) => all.map((o): Promise<KeyedAppendOutcome> => Promise.resolve(o)),
        // One message's fault (say a repeated idempotency key) must not fail the others: one at a time.
        () => messages.map((m) => appendMessageOnce(m, maxHistory)),
      );
      group.forEach((p, i) => p.settle(outcomes[i]!));
      await Promise.allSettled(outcomes);
    }
    this.draining = false;
  }

  /** The oldest waiting appends, one per session (a later one of a session waits for the next group). */
  private takeGroup(): PendingAppend[] {
    const sessions = new Set<string>();
    const group: PendingAppend[] = [];
    const rest: PendingAppend[] = [];
    for (const p of this.waiting) {
      if (group.length < maxGroup && !sessions.has(p.message.session_id)) {
        sessions.add(p.message.session_id);
        group.push(p);
      } else rest.push(p);
    }
    this.waiting = rest;
    return group;
  }
}


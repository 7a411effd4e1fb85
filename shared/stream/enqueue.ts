/**
 * Putting accepted events on their session's lane. While an add to a lane is under way, requests for
 * that lane (any of its sessions) wait beside it and then go as one job: an idle lane adds at once,
 * a busy one pays the queue's fixed cost (scripts, round trips, a job's run) once per group instead
 * of once per request. Nothing waits on a timer, and each request's events stay together and in
 * the order they were handed over.
 */
import { enqueue, queueOfJob } from '../queues.js';
import { ZodError } from 'zod';
import { maxEventsPerJob, type StreamEvent } from './schemas.js';

/** Message text one job carries at most (besides a request bigger than that, which goes alone). */
const maxContentPerJob = 1 << 20;

interface Waiting {
  events: StreamEvent[];
  added: () => void;
  failed: (err: unknown) => void;
}

/** Per lane: requests waiting for the add under way to end. */
const lanes = new Map<string, { waiting: Waiting[]; adding: boolean }>();

const contentOf = (events: StreamEvent[]) => events.reduce((n, e) => n + (e.kind === 'message' ? e.content.length : 0), 0);

/** Takes the waiting requests one job carries: whole requests, in order, within the job's limits. */
function takeGroup(waiting: Waiting[]): Waiting[] {
  let events = 0;
  let content = 0;
  let n = 0;
  while (n < waiting.length) {
    const next = waiting[n]!;
    events += next.events.length;
    content += contentOf(next.events);
    if (n > 0 && (events > maxEventsPerJob || content > maxContentPerJob)) break;
    n++;
  }
  return waiting.splice(0, n);
}

async function addWaiting(lane: string, state: { waiting: Waiting[]; adding: boolean }): Promise<void> {
  state.adding = true;
  try {
    while (state.waiting.length) {
      const group = takeGroup(state.waiting);
      try {
        await enqueue('stream.deliver', { events: group.flatMap((w) => w.events) });
        for (const w of group) w.added();
      } catch (err) {
        if (!(err instanceof ZodError) || group.length === 1) for (const w of group) w.failed(err);
        // A request the job schema refuses fails the group's add: each is added alone, so only it is refused.
        else for (const w of group) await enqueue('stream.deliver', { events: w.events }).then(w.added, w.failed);
      }
    }
  } finally {
    state.adding = false;
    if (!state.waiting.length) lanes.delete(lane);
  }
}

/**
 * Hands a request's events (one session's, in order) to their lane before it returns; resolves once
 * they are in the queue, rejects when the add failed (nothing of them was enqueued). The job schema
 * checks them with their group's; a request it refuses never fails the others of its group.
 */
export async function enqueueOnLane(events: StreamEvent[]): Promise<void> {
  const lane = queueOfJob('stream.deliver', { events });
  const state = lanes.get(lane) ?? { waiting: [], adding: false };
  lanes.set(lane, state);
  const added = new Promise<void>((resolve, reject) => state.waiting.push({ events, added: resolve, failed: reject }));
  if (!state.adding) void addWaiting(lane, state);
  return added;
}

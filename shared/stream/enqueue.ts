/**
 * Putting accepted events on their session's lane, a group at a time (group commit, per lane and
 * API process). An idle lane sends a request at once (after the I/O phase it arrived in, so requests
 * parsed together leave together). While a group is on its way (added, and not yet published to the
 * callers waiting for it), the lane's later requests wait and leave together as the next group; once
 * pipelineAfter events wait, a second group leaves before the first is published, so the worker
 * writes one group while this process answers the one before. The queue's fixed cost (a limits
 * script, an add, a job's run) is paid per group, the less often per message the higher the load,
 * with no timer on an idle lane. Groups of a lane are added one after another and each keeps its
 * requests whole and in the order they were handed over, so each session keeps its order.
 * A group's publication is only waited for up to holdCapMs: a lane whose job is stuck (a locked row,
 * until the session is parked) or a caller that stopped waiting delays the next group by that at most.
 */
import { ZodError } from 'zod';
import { takeLimitsTogether, type LimitTake } from '../limits.js';
import { enqueue, queueOfJob } from '../queues.js';
import { maxEventsPerJob, type StreamEvent } from './stream.schemas.js';

/** Message text one job carries at most (besides a request bigger than that, which goes alone). */
const maxContentPerJob = 1 << 20;
/** Longest a lane holds its next group for the publication of the groups on their way. */
const holdCapMs = 250;
/** Groups of a lane on their way (added, not yet published) at most. */
const maxOnTheWay = 2;
/** Events that must be waiting before a second group leaves while one is on its way. */
const pipelineAfter = 16;

/** Ends a caller's wait for its request's publication; the lane may then send its next group. */
export type Settle = () => void;

interface Waiting {
  events: StreamEvent[];
  limits: readonly LimitTake[];
  awaited: boolean;
  added: (settle: Settle) => void;
  failed: (err: unknown) => void;
}

interface Lane {
  waiting: Waiting[];
  /** A group of this lane is being added (adds stay one at a time: the queue keeps their order). */
  adding: boolean;
  /** A pump of this lane is scheduled for the end of the I/O phase. */
  scheduled: boolean;
  /** Groups added whose awaited requests are not all settled yet. */
  onTheWay: Set<Group>;
}

interface Group {
  unsettled: number;
  hold: NodeJS.Timeout;
}

const lanes = new Map<string, Lane>();

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

const noop: Settle = () => undefined;

/** The group's requests are in the queue: each caller gets the settle of its wait; the group is on its way until all have settled. */
function sent(name: string, lane: Lane, group: Waiting[]): void {
  const awaited = group.filter((w) => w.awaited).length;
  if (!awaited) {
    for (const w of group) w.added(noop);
    return;
  }
  const onItsWay: Group = { unsettled: awaited, hold: setTimeout(() => published(name, lane, onItsWay), holdCapMs) };
  lane.onTheWay.add(onItsWay);
  for (const w of group) {
    if (!w.awaited) {
      w.added(noop);
      continue;
    }
    let settled = false;
    w.added(() => {
      if (settled) return;
      settled = true;
      if (--onItsWay.unsettled === 0) published(name, lane, onItsWay);
    });
  }
}

function published(name: string, lane: Lane, group: Group): void {
  clearTimeout(group.hold);
  if (lane.onTheWay.delete(group)) pump(name, lane);
}

/** Adds a group: its limits in one round trip (refusing the requests over them), then one job. */
async function addGroup(name: string, lane: Lane, group: Waiting[]): Promise<void> {
  let refusals;
  try {
    refusals = await takeLimitsTogether(group.map((w) => w.limits));
  } catch (err) {
    for (const w of group) w.failed(err);
    return;
  }
  const admitted = group.filter((w, i) => {
    const refusal = refusals[i];
    if (refusal) w.failed(refusal);
    return !refusal;
  });
  if (!admitted.length) return;
  try {
    await enqueue('stream.deliver', { events: admitted.flatMap((w) => w.events) });
    sent(name, lane, admitted);
  } catch (err) {
    if (!(err instanceof ZodError) || admitted.length === 1) {
      for (const w of admitted) w.failed(err);
      return;
    }
    // A request the job schema refuses fails the group's add: each is added alone, so only it is refused.
    for (const w of admitted) {
      await enqueue('stream.deliver', { events: w.events }).then(
        () => sent(name, lane, [w]),
        (alone: unknown) => w.failed(alone),
      );
    }
  }
}

/** Sends the lane's next group when it may: nothing being added, and room on the way. */
function pump(name: string, lane: Lane): void {
  if (lane.adding) return;
  if (!lane.waiting.length) {
    if (!lane.onTheWay.size && !lane.scheduled) lanes.delete(name);
    return;
  }
  const onTheWay = lane.onTheWay.size;
  if (onTheWay >= maxOnTheWay) return;
  if (onTheWay > 0 && lane.waiting.reduce((n, w) => n + w.events.length, 0) < pipelineAfter) return;
  lane.adding = true;
  void addGroup(name, lane, takeGroup(lane.waiting)).finally(() => {
    lane.adding = false;
    pump(name, lane);
  });
}

/**
 * Hands a request's events (one session's, in order) to their lane: resolves once they are in the
 * queue, with the function that ends the caller's wait for their publication (call it when the wait
 * ends, published or not, when `awaited`); rejects when they were refused (a limit of `limits`: 429;
 * the job schema) or the add failed, and then nothing of them was enqueued. A request refused never
 * fails the others of its group.
 */
export function enqueueOnLane(events: StreamEvent[], options: { limits?: readonly LimitTake[]; awaited?: boolean } = {}): Promise<Settle> {
  const name = queueOfJob('stream.deliver', { events });
  let lane = lanes.get(name);
  if (!lane) lanes.set(name, (lane = { waiting: [], adding: false, scheduled: false, onTheWay: new Set() }));
  const target = lane;
  return new Promise<Settle>((added, failed) => {
    target.waiting.push({ events, limits: options.limits ?? [], awaited: options.awaited ?? false, added, failed });
    if (target.scheduled) return;
    target.scheduled = true;
    // Requests handed over in the same I/O phase leave in the same group.
    setImmediate(() => {
      target.scheduled = false;
      pump(name, target);
    });
  });
}

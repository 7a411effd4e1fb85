/**
 * The accepting side of the session lanes: accepted events are grouped per lane and each group is
 * enqueued as one sessions.deliver-batch job (deliver.ts deliverBatch runs it). A lane has at most
 * one group on its way per process: while a group is being added, and then until every event of it
 * that a caller waits for has been published (or that wait ended), later events of the lane wait
 * and leave together as the next group. An idle lane sends an event at once; a busy one sends larger
 * groups, so the queue's Redis work (one job added, taken and finished) is paid per group, not per
 * event, the more so the higher the load. Groups of a lane leave in acceptance order, and the lane
 * runs its jobs one at a time, so each session's events keep that order.
 */
import { enqueue, laneOf, sessionLanes } from '../queues.js';
import { maxLaneBatch, type DeliverJob } from './schemas.js';

interface Waiting {
  event: DeliverJob;
  /** A caller waits for this event's publication and reports it (deliverSettled). */
  awaited: boolean;
  added(): void;
  failed(err: unknown): void;
}

interface Lane {
  waiting: Waiting[];
  /** A group of this lane is on its way (being added, or added with awaited events not yet settled). */
  busy: boolean;
  /** Awaited events of the group on its way that are not published yet. */
  unsettled: Set<string>;
  hold?: NodeJS.Timeout;
}

/**
 * Longest a lane waits for the awaited events of its group before sending the next one (a caller's
 * wait normally ends earlier: published, or its own timeout). Order does not depend on it.
 */
const holdCapMs = 250;

const lanes = new Map<number, Lane>();
/** Lane of each unsettled event. */
const laneOfEvent = new Map<string, Lane>();

const eventId = (e: DeliverJob) => (e.kind === 'message' ? e.message_id : e.event_id);

/**
 * Accepts an event into its session's lane; resolves once the job holding it is in the queue.
 * `awaited`: the caller waits for its publication and calls deliverSettled(id) when that wait ends.
 */
export function enqueueDeliver(event: DeliverJob, awaited = false): Promise<void> {
  const index = laneOf(event.session_id, sessionLanes.length);
  let lane = lanes.get(index);
  if (!lane) lanes.set(index, (lane = { waiting: [], busy: false, unsettled: new Set() }));
  const target = lane;
  return new Promise<void>((added, failed) => {
    target.waiting.push({ event, awaited, added, failed });
    if (!target.busy) {
      target.busy = true;
      // Events accepted in the same I/O phase leave in the same group.
      setImmediate(() => send(target));
    }
  });
}

/** The wait for an event's publication ended (published, or timed out): its lane may send its next group. */
export function deliverSettled(id: string): void {
  const lane = laneOfEvent.get(id);
  if (!lane) return;
  laneOfEvent.delete(id);
  lane.unsettled.delete(id);
  if (!lane.unsettled.size) release(lane);
}

function send(lane: Lane): void {
  const group = lane.waiting.splice(0, maxLaneBatch);
  if (!group.length) {
    lane.busy = false;
    return;
  }
  enqueue('sessions.deliver-batch', { events: group.map((w) => w.event) }).then(
    () => {
      // Registered before the callers resume, so no settlement arrives for an unknown event.
      for (const w of group) {
        if (!w.awaited) continue;
        const id = eventId(w.event);
        lane.unsettled.add(id);
        laneOfEvent.set(id, lane);
      }
      for (const w of group) w.added();
      if (!lane.unsettled.size) release(lane);
      else lane.hold = setTimeout(() => release(lane), holdCapMs);
    },
    (err: unknown) => {
      for (const w of group) w.failed(err);
      release(lane);
    },
  );
}

function release(lane: Lane): void {
  clearTimeout(lane.hold);
  lane.hold = undefined;
  for (const id of lane.unsettled) laneOfEvent.delete(id);
  lane.unsettled.clear();
  if (lane.waiting.length) send(lane);
  else lane.busy = false;
}

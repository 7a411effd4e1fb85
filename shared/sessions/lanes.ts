/**
 * The accepting side of the session lanes: accepted events are grouped per lane and each group is
 * enqueued as one sessions.deliver-batch job (deliver.ts deliverBatch runs it). An idle lane sends
 * an event at once. While a group is on its way (being added, then until every event of it that a
 * caller waits for has been published, or that wait ended), later events of the lane wait and leave
 * together as the next group, so the queue's Redis work (one job added, taken and finished) is paid
 * per group, not per event, the more so the higher the load. Once enough events wait
 * (pipelineAfter), a second group leaves before the first is published: the worker then persists
 * one group while this process answers and streams the one before, instead of each stage waiting
 * for the others. Groups of a lane are added one after another, in acceptance order, and the lane
 * runs its jobs one at a time in that order, so each session's events keep it.
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

/** A group in the queue whose awaited events are not all published yet. */
interface Group {
  lane: Lane;
  unsettled: Set<string>;
  hold: NodeJS.Timeout;
}

interface Lane {
  waiting: Waiting[];
  /** A group of this lane is being added (adds stay one at a time: the queue keeps their order). */
  adding: boolean;
  /** A pump of this lane is scheduled. */
  scheduled: boolean;
  /** Groups added whose awaited events are not all published yet. */
  unpublished: Set<Group>;
}

/**
 * Longest a lane waits for the awaited events of a group before counting it as published (a
 * caller's wait normally ends earlier: published, or its own timeout). Order does not depend on it.
 */
const holdCapMs = 250;
/** Groups of a lane that may be added and not yet published. */
const maxUnpublished = 2;
/**
 * Events that must be waiting before a second group leaves while one is unpublished: at low rates
 * a lane keeps one group on its way (larger groups, fewer jobs); under load it pipelines. Three
 * groups on the way from 4 waiting events measured no better (two alternating runs each, 12 s
 * steps: p99 at 2,000 msg/s 63.6 and 77.4 ms against 65.2 and 185.2; 2,500 failed in all four).
 */
const pipelineAfter = 16;

const lanes = new Map<number, Lane>();
/** Group of each unsettled event. */
const groupOfEvent = new Map<string, Group>();

const eventId = (e: DeliverJob) => (e.kind === 'message' ? e.message_id : e.event_id);

/**
 * Accepts an event into its session's lane; resolves once the job holding it is in the queue.
 * `awaited`: the caller waits for its publication and calls deliverSettled(id) when that wait ends.
 */
export function enqueueDeliver(event: DeliverJob, awaited = false): Promise<void> {
  const index = laneOf(event.session_id, sessionLanes.length);
  let lane = lanes.get(index);
  if (!lane) lanes.set(index, (lane = { waiting: [], adding: false, scheduled: false, unpublished: new Set() }));
  const target = lane;
  return new Promise<void>((added, failed) => {
    target.waiting.push({ event, awaited, added, failed });
    if (!target.scheduled) {
      target.scheduled = true;
      // Events accepted in the same I/O phase leave in the same group.
      setImmediate(() => {
        target.scheduled = false;
        pump(target);
      });
    }
  });
}

/** The wait for an event's publication ended (published, or timed out): its group may count as published. */
export function deliverSettled(id: string): void {
  const group = groupOfEvent.get(id);
  if (!group) return;
  groupOfEvent.delete(id);
  group.unsettled.delete(id);
  if (!group.unsettled.size) published(group);
}

/** Sends the lane's next group when the lane may: nothing being added, and room on the way. */
function pump(lane: Lane): void {
  if (lane.adding || !lane.waiting.length) return;
  const onTheWay = lane.unpublished.size;
  if (onTheWay >= maxUnpublished || (onTheWay > 0 && lane.waiting.length < pipelineAfter)) return;
  const group = lane.waiting.splice(0, maxLaneBatch);
  lane.adding = true;
  enqueue('sessions.deliver-batch', { events: group.map((w) => w.event) }).then(
    () => {
      // Registered before the callers resume, so no settlement arrives for an unknown event.
      const awaited = group.filter((w) => w.awaited).map((w) => eventId(w.event));
      if (awaited.length) {
        const sent: Group = { lane, unsettled: new Set(awaited), hold: setTimeout(() => published(sent), holdCapMs) };
        for (const id of awaited) groupOfEvent.set(id, sent);
        lane.unpublished.add(sent);
      }
      for (const w of group) w.added();
      lane.adding = false;
      pump(lane);
    },
    (err: unknown) => {
      for (const w of group) w.failed(err);
      lane.adding = false;
      pump(lane);
    },
  );
}

function published(group: Group): void {
  clearTimeout(group.hold);
  for (const id of group.unsettled) groupOfEvent.delete(id);
  group.unsettled.clear();
  if (group.lane.unpublished.delete(group)) pump(group.lane);
}

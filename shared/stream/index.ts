/**
 * The session stream: accept, order, persist, publish, replay.
 *
 * Design. A request (POST messages or events, an interaction's join, leave or final_history, a close)
 * is checked and its events get their ids (accept.ts); they go to the lane of their session: one of
 * STREAM_LANES BullMQ queues (`stream-lane-<hash of session_id mod STREAM_LANES>`), each running one
 * job at a time across every worker process, the lanes side by side in whichever processes are free.
 * The work is paid per group, not per message, at three places:
 * - The session check (the session exists and is live, the interaction is its own) is answered from
 *   a bounded per-process cache (publishable.ts), filled when a channel opens the session's stream or
 *   first publishes, and invalidated on every process over the bus when a session closes or is erased
 *   (STREAM_SESSION_CACHE_MS bounds a missed invalidation; a lane that finds the session closed
 *   refuses the event and the waiting request answers 409/404 as the check would have).
 * - Group commit per lane in each API process (enqueue.ts): while a group of the lane is on its way
 *   (added, its callers not yet answered), the lane's next requests wait and leave together, after one
 *   script that takes every limit of the group (LIMIT_PUBLISHES_*: exact across processes) and one add.
 *   An idle lane sends at once; no timer. The heavier the load, the larger the groups.
 * - Take-along (persist.ts): a lane job also takes the jobs waiting behind it on its lane (none of
 *   them can start while it runs) and removes them once written; it checks whether any of its
 *   sessions is parked in one command, writes its sessions' messages in one statement (history rows,
 *   sequences, last_activity, audit rows, trim), then PUBLISHes each event on `session:{id}:events`
 *   (auto-pipelined: one write). Every API process holds one Redis subscriber and writes each event to
 *   its SSE streams of that session (api/stream/).
 * Sizing lanes: lanes are parallelism only (isolation comes from parking, below). One lane keeps the
 * groups largest and measured cheapest on a 2-core machine (docs/performance.md), so it is the
 * default; on a fleet, give each lane at most one worker process's share: STREAM_LANES of about the
 * number of worker processes (each lane job's run is single-threaded), raised while the lanes' p99
 * wait grows and CPU stays free.
 *
 * Isolation. Lane statements wait at most STREAM_LOCK_TIMEOUT_MS for a session row someone else
 * holds. A write that fails for one session (a lock, a payload Postgres refuses) parks that session
 * (parked.ts): its events, this one and every later one, wait in order in a list of its own, written
 * by a `stream.drain-parked` job, while the lane goes on with the other sessions. A lock or an outage
 * is waited out; a write that keeps failing is set aside after the queue's attempts, as a failed job
 * holding the event and its reason (queue dashboard, switchboard_stream_events_set_aside_total), and the
 * session's later events follow. An outage of Postgres or Redis is everyone's: the lane waits it out
 * holding its job (up to 5 minutes, then the queue's retries).
 *
 * Guarantees.
 * - Order: a session's events take contiguous sequences in the order they were accepted (the order
 *   their jobs entered the session's lane), across any number of API and worker processes.
 * - At least once, made exactly once by ids: a job may run twice (a worker dies, a retry); every
 *   event carries its id from acceptance, a rerun writes nothing and republishes the same sequence,
 *   and streams drop a sequence they have written. An Idempotency-Key makes a client's retry one message.
 * - Replay: Redis keeps nothing of the stream. A client reconnecting with Last-Event-ID gets what
 *   it missed from Postgres, then the live events, without gap or duplicate; a stream that sees a
 *   sequence jump (a lost publish, a subscriber reconnect) fills the gap from Postgres itself.
 * - During an outage: with Redis down, POSTs and new streams answer 503 (nothing is accepted that
 *   could be lost) and open streams fill their gap when the bus is back; with Postgres down, POSTs
 *   answer 503 and accepted events wait in their lane until it is back. A slow SSE client is cut off
 *   (it reconnects and replays) instead of growing the API's memory.
 * - A message accepted into a session that closes before its turn is not written (counted in
 *   switchboard_stream_events_dropped_total); the close's final event ends every stream. An erasure's
 *   final event goes through the lane too (kind `erased`, written nowhere: the rows are gone), at the
 *   sequence the erasure took under the session's row lock, so it follows what was accepted before it.
 *
 * Changing STREAM_LANES moves sessions to other lanes: drain the lanes first (README, Operations).
 */
export { acceptEvent, acceptMessage, appendHistory, endErasedStreams, enqueueAndAwait, isFinalEvent, publishSessionClosed, waitForPublished } from './accept.js';
export type { AcceptOptions, EventAcceptance, Publication } from './accept.js';
export { forgetPublishable, primePublishable } from './publishable.js';

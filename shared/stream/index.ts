/**
 * The session stream: accept, order, persist, publish, replay.
 *
 * Design. A request (POST messages or events, an interaction's join, leave or final_history, a close)
 * is checked against Postgres and its events get their ids (accept.ts); they go to the lane of their
 * session: one of STREAM_LANES BullMQ queues (`stream-lane-<hash of session_id mod STREAM_LANES>`),
 * each running one job at a time across every worker process, the lanes side by side in whichever
 * processes are free. Requests that reach an API process while its previous add to the same lane is
 * under way go together as one `stream.deliver` job (enqueue.ts): no timer, so an idle lane adds at
 * once and a busy one pays the queue's cost per group. A lane job also takes the jobs waiting behind
 * it on its lane (none of them can start meanwhile) and removes them once written (persist.ts). It
 * writes its sessions' messages in one statement (history rows, sequences, last_activity, audit
 * rows, trim), then PUBLISHes each event on
 * `session:{id}:events` (persist.ts). Every API process holds one Redis subscriber and writes each
 * event to its SSE streams of that session (api/stream/).
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
 *   switchboard_stream_events_dropped_total); the close's final event ends every stream.
 *
 * Changing STREAM_LANES moves sessions to other lanes: drain the lanes first (README, Operations).
 */
export { acceptEvent, acceptMessage, appendHistory, enqueueAndAwait, isFinalEvent, publishSessionClosed, waitForPublished } from './accept.js';
export type { AcceptOptions, EventAcceptance, Publication } from './accept.js';
export { forgetPublishable } from './publishable.js';

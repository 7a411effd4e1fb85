/**
 * The request a piece of work serves, carried through async calls (AsyncLocalStorage): set by the
 * API for each request and by the worker runner for each job that an API request enqueued, so log
 * lines of both carry its request_id (shared/logger.ts) and enqueue() hands it on to the job.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const context = new AsyncLocalStorage<string>();

/** Runs `work` as part of request `requestId`. */
export const withRequestId = <T>(requestId: string, work: () => T): T => context.run(requestId, work);

/** The id of the request the current work serves, if any. */
export const currentRequestId = (): string | undefined => context.getStore();

/**
 * The key of a job's data that carries the id of the request that enqueued it. Job schemas never
 * see it: the worker runner takes it out before parsing the payload.
 */
export const jobRequestIdKey = '_request_id';

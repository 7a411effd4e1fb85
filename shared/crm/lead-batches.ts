/**
 * The API side of batch webhooks: a batch is enqueued (crm.ingest-lead-batch) and the request waits
 * a bounded time (CRM_BATCH_WAIT_MS) for the worker's outcome, so the response reflects what was
 * written. Past the bound the batch stays queued and is answered as accepted (202); repeating the
 * delivery id later returns the stored outcome.
 */
import { randomUUID } from 'node:crypto';
import { config } from '../config.js';
import { enqueue, jobEvents } from '../queues.js';
import type { BatchResult } from './crm.schemas.js';

export type BatchSubmission = { done: true; result: BatchResult } | { done: false; delivery_id: string };

/** Enqueues a batch and waits up to `waitMs` (0: not at all) for its outcome. */
export async function submitLeadBatch(leads: unknown[], source: string | null, deliveryId: string | undefined, waitMs = config().crm.batchWaitMs): Promise<BatchSubmission> {
  const delivery_id = deliveryId ?? randomUUID();
  const qe = await jobEvents('crm.ingest-lead-batch');
  const job = await enqueue('crm.ingest-lead-batch', { delivery_id, source, leads });
  if (waitMs <= 0) return { done: false, delivery_id };
  try {
    return { done: true, result: (await job.waitUntilFinished(qe, waitMs)) as BatchResult };
  } catch {
    // Timed out or failed an attempt: the job stays queued and is retried by the queue's policy.
    return { done: false, delivery_id };
  }
}

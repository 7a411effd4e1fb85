/** Queries of crm_webhook_deliveries: one row per processed webhook delivery id, with the response it got. */
import type { Knex } from 'knex';
import { db } from '../db/index.js';

const TABLE = 'crm_webhook_deliveries';

export type DeliveryKind = 'lead' | 'lead_batch';

/** The stored result of a delivery already processed. */
export async function findDelivery<T>(kind: DeliveryKind, deliveryId: string, k: Knex = db()): Promise<T | undefined> {
  const row = await k(TABLE).where({ kind, delivery_id: deliveryId }).first('result');
  return row?.result as T | undefined;
}

/**
 * Serialises the processing of one delivery id until the end of the caller's transaction (a
 * transaction-scoped advisory lock: no row is written), then returns the stored result when the id
 * was already processed. A concurrent duplicate waits here and then sees the first one's result.
 */
export async function lockDelivery<T>(k: Knex, kind: DeliveryKind, deliveryId: string): Promise<T | undefined> {
  await k.raw('select pg_advisory_xact_lock(hashtextextended(?, 7301))', [`${kind}:${deliveryId}`]);
  return findDelivery<T>(kind, deliveryId, k);
}

/** Stores the result of a delivery processed under lockDelivery() (same transaction). */
export async function recordDelivery(k: Knex, deliveryId: string, kind: DeliveryKind, result: unknown): Promise<void> {
  await k(TABLE).insert({ delivery_id: deliveryId, kind, result: JSON.stringify(result) });
}

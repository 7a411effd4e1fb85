/** Queries of crm_webhook_deliveries: one row per processed webhook delivery id, with the response it got. */
import type { Knex } from 'knex';
import { db } from '../db/index.js';

const TABLE = 'crm_webhook_deliveries';

export type DeliveryKind = 'lead' | 'lead_batch';

/** The stored result of a delivery already processed. */
export async function findDelivery<T>(deliveryId: string, k: Knex = db()): Promise<T | undefined> {
  const row = await k(TABLE).where({ delivery_id: deliveryId }).first('result');
  return row?.result as T | undefined;
}

/**
 * Claims a delivery id at the start of the transaction that does its work. A concurrent claim of the
 * same id waits on the primary key until this transaction ends; it then gets false (committed) or
 * the claim (rolled back). Returns false when the id was already processed.
 */
export async function claimDelivery(deliveryId: string, kind: DeliveryKind, k: Knex): Promise<boolean> {
  const rows = await k(TABLE).insert({ delivery_id: deliveryId, kind, result: '{}' }).onConflict('delivery_id').ignore().returning('delivery_id');
  return rows.length === 1;
}

/** Stores the response of a claimed delivery (same transaction as the claim). */
export async function completeDelivery(deliveryId: string, result: unknown, k: Knex): Promise<void> {
  await k(TABLE).where({ delivery_id: deliveryId }).update({ result: JSON.stringify(result) });
}

/** Alert lifecycle moves by API (acknowledge, resolve), each with its history row and a flapping re-check. */
import { config } from '../../config.js';
import { db } from '../../db/index.js';
import { evaluateFlapping, getAlert, transitionAlert, type AlertInstance, type AlertStatus } from './alert.store.js';
import { publishSreEvent } from '../events.js';

export async function moveAlert(id: string, to: Exclude<AlertStatus, 'firing'>, by: string, note?: string): Promise<AlertInstance> {
  const { flapThreshold, flapWindowSeconds } = config().sre;
  const alert = await db().transaction(async (trx) => {
    const { sourceId, fingerprint } = await transitionAlert(trx, id, to, by, note);
    await evaluateFlapping(trx, sourceId, [fingerprint], flapThreshold, flapWindowSeconds);
    return getAlert(id, trx);
  });
  publishSreEvent('alert.changed', { id, fingerprint: alert.fingerprint, status: alert.status, by });
  return alert;
}

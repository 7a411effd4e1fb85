import type { Handler } from '../runner.js';
import { settleFlappingAlerts } from '../../shared/sre/alerts/ingest.js';
import type { jobDefinitions } from '../../shared/queues.js';

/** Clears flapping of alerts stable for the window and automates the ones that became eligible. */
export const alertsTick: Handler<(typeof jobDefinitions)['sre.alerts-tick']['schema']> = () => settleFlappingAlerts();

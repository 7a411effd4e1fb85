import type { JobHandler } from '../runner.js';
import { settleFlappingAlerts } from '../../shared/sre/alerts/ingest.js';

/** Clears flapping of alerts stable for the window and automates the ones that became eligible. */
export const alertsTick: JobHandler<'sre.alerts-tick'> = () => settleFlappingAlerts();

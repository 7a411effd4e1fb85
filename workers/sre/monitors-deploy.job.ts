import type { Handler } from '../runner.js';
import { runMonitorDeploy } from '../../shared/sre/monitors/deploy-request.js';
import type { jobDefinitions } from '../../shared/queues.js';

/** deploy-all on the worker pool that shares RULES_DIR with Prometheus (the rules queue). */
export const monitorsDeploy: Handler<(typeof jobDefinitions)['sre.monitors-deploy']['schema']> = () => runMonitorDeploy();

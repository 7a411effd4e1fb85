import type { Handler } from '../runner.js';
import { proposeForGroup } from '../../shared/sre/monitors/recommend.js';
import type { jobDefinitions } from '../../shared/queues.js';

/** One model call for a group of new entities of one type and template signature; the valid rules stored for each. */
export const monitorsPropose: Handler<(typeof jobDefinitions)['sre.monitors-propose']['schema']> = (p) => proposeForGroup(p);

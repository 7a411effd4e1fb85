/** Request and response schemas of the pipeline routes beyond the pipeline itself (shared/crm/crm.schemas.ts). */
import { z, uuid } from '../../shared/zod.js';
import { pipeline } from '../../shared/crm/crm.schemas.js';

export const pipelineParams = z.object({ pipeline_id: uuid() });
export const stageParams = z.object({ pipeline_id: uuid(), stage_id: uuid() });
/** DELETE …/stages/{stage_id}: where the stage's opportunities go. */
export const stageDeleteQuery = z.object({ move_to: uuid().optional() });
export const pipelineList = z.object({ data: z.array(pipeline) });

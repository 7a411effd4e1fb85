/**
 * The CRM's resources and inputs as zod schemas: one declaration each, shared by the REST routes
 * (validation and OpenAPI), the agent tools and the workers. JSON fields are spelled as in the spec.
 */
import { z, uuid } from '../zod.js';

export const leadStatuses = ['new', 'contacted', 'qualified', 'unqualified', 'converted'] as const;
export const leadStatus = z.enum(leadStatuses);
export type LeadStatus = z.infer<typeof leadStatus>;
/**
 * The lead lifecycle. The spec fixes new → contacted → qualified → converted; unqualified is reachable
 * from the three open states; we let an unqualified lead be reopened (→ new); converted is final.
 */
export const leadTransitions: Record<LeadStatus, LeadStatus[]> = {
  new: ['contacted', 'unqualified'],
  contacted: ['qualified', 'unqualified'],
  qualified: ['converted', 'unqualified'],
  unqualified: ['new'],
  converted: [],
};

/** Statuses crm_update_lead accepts, as the spec lists them (converted only comes from a conversion). */
export const settableLeadStatus = z.enum(['new', 'contacted', 'qualified', 'unqualified']);

export const segments = ['SMB', 'Mid-Market', 'Enterprise'] as const;

const text = (max: number) => z.string().trim().max(max, `must be at most ${max} characters`);
/** A calendar date, YYYY-MM-DD. */
export const isoDate = z.iso.date({ error: 'must be a date (YYYY-MM-DD)' });
const timestamp = z.string().openapi({ format: 'date-time' });

/** Lead fields as the webhook and the create calls accept them (spec: "Lead"; limits of the webhook). */
export const leadInput = z
  .object({
    first_name: text(100).min(1, 'is required'),
    last_name: text(100).min(1, 'is required'),
    email: z.email({ error: 'must be an email address' }).max(254).optional(),
    phone: text(50).optional(),
    company: text(200).optional(),
    title: text(200).optional(),
    source: text(100).optional(),
    source_detail: text(500).optional(),
    estimated_value: text(50).optional(),
    notes: text(10_000).optional(),
    custom_data: z.record(z.string(), z.unknown()).optional(),
  })
  .openapi('LeadInput');
export type LeadInput = z.output<typeof leadInput>;

export const leadUpdate = leadInput
  .partial()
  // Any status is accepted here so that `converted` gets the lifecycle's 409 (it is reached only by conversion).
  .extend({ status: leadStatus.optional() })
  .openapi('LeadUpdate');
export type LeadUpdate = z.output<typeof leadUpdate>;

export const lead = z
  .object({
    id: uuid(),
    first_name: z.string(),
    last_name: z.string(),
    email: z.string().nullable(),
    phone: z.string().nullable(),
    company: z.string().nullable(),
    title: z.string().nullable(),
    status: leadStatus,
    allowed_next_states: z.array(leadStatus).openapi({ description: 'statuses this lead may move to next (converted: by conversion only)' }),
    source: z.string().nullable(),
    source_detail: z.string().nullable(),
    estimated_value: z.string().nullable(),
    notes: z.string().nullable(),
    custom_data: z.record(z.string(), z.unknown()),
    converted_at: timestamp.nullable(),
    converted_opportunity_id: uuid().nullable(),
    converted_account_id: uuid().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('Lead');
export type Lead = z.infer<typeof lead>;

export const accountInput = z
  .object({
    name: text(200).min(1, 'is required'),
    domain: text(255).toLowerCase().optional(),
    industry: text(100).optional(),
    segment: z.enum(segments).optional(),
  })
  .openapi('AccountInput');
export type AccountInput = z.output<typeof accountInput>;
export const accountUpdate = accountInput.partial().openapi('AccountUpdate');
export type AccountUpdate = z.output<typeof accountUpdate>;

export const account = z
  .object({
    id: uuid(),
    name: z.string(),
    domain: z.string().nullable(),
    industry: z.string().nullable(),
    segment: z.enum(segments).nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('Account');
export type Account = z.infer<typeof account>;

const probability = z.number().int('must be an integer').min(0, 'must be between 0 and 100').max(100, 'must be between 0 and 100');
const amount = z.number().min(0, 'must be 0 or more').max(999_999_999_999, 'is too large');

export const opportunityInput = z
  .object({
    name: text(200).min(1, 'is required'),
    account_id: uuid().optional(),
    pipeline_id: uuid().optional(),
    stage: text(100).min(1).optional(),
    amount: amount.optional(),
    close_date: isoDate.optional(),
    probability: probability.optional(),
  })
  .openapi('OpportunityInput');
export type OpportunityInput = z.output<typeof opportunityInput>;

export const opportunityUpdate = opportunityInput
  .partial()
  .extend({ account_id: uuid().nullable().optional(), close_date: isoDate.nullable().optional() })
  .openapi('OpportunityUpdate');
export type OpportunityUpdate = z.output<typeof opportunityUpdate>;

export const opportunity = z
  .object({
    id: uuid(),
    name: z.string(),
    account_id: uuid().nullable(),
    pipeline_id: uuid(),
    stage: z.string(),
    amount: z.number(),
    close_date: z.string().nullable().openapi({ format: 'date' }),
    probability: z.number().int(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('Opportunity');
export type Opportunity = z.infer<typeof opportunity>;


export const stage = z.object({ id: uuid(), name: z.string(), position: z.number().int(), probability: z.number().int() }).openapi('PipelineStage');
export const pipeline = z
  .object({ id: uuid(), name: z.string(), is_default: z.boolean(), stages: z.array(stage), created_at: timestamp, updated_at: timestamp })
  .openapi('Pipeline');
export type Pipeline = z.infer<typeof pipeline>;
export const pipelineInput = z
  .object({
    name: text(200).min(1, 'is required'),
    stages: z
      .array(z.object({ name: text(100).min(1, 'is required'), probability }))
      .min(1, 'needs at least one stage')
      .refine((s) => new Set(s.map((x) => x.name.toLowerCase())).size === s.length, 'stage names must be unique'),
  })
  .openapi('PipelineInput');
export type PipelineInput = z.output<typeof pipelineInput>;

export const pipelineUpdate = z
  .object({
    name: text(200).min(1, 'is required').optional(),
    // Only true: a pipeline stops being the default when another one is chosen, so there is always one.
    is_default: z.literal(true, { error: 'can only be set to true (choose another pipeline to move the default)' }).optional(),
  })
  .openapi('PipelineUpdate');
export type PipelineUpdate = z.output<typeof pipelineUpdate>;

export const stageInput = z
  .object({
    name: text(100).min(1, 'is required'),
    probability,
    /** 1-based; absent: after the last stage. */
    position: z.number().int('must be an integer').min(1, 'must be 1 or more').optional(),
  })
  .openapi('PipelineStageInput');
export type StageInput = z.output<typeof stageInput>;
export const stageUpdate = stageInput.partial().openapi('PipelineStageUpdate');
export type StageUpdate = z.output<typeof stageUpdate>;

const closedSum = z.object({ count: z.number().int(), value: z.number() });
/**
 * The spec's crm_get_pipeline_summary result; each stage also says whether it is `open` or closed
 * (`won` at 100 %, `lost` at 0 %), and the totals count open stages only, with won and lost apart.
 */
export const pipelineSummary = z
  .object({
    pipeline_id: uuid(),
    stages: z.record(
      z.string(),
      z.object({ count: z.number().int(), value: z.number(), weighted_value: z.number(), probability: z.number(), state: z.enum(['open', 'won', 'lost']) }),
    ),
    totals: z.object({
      opportunities: z.number().int().openapi({ description: 'open opportunities' }),
      pipeline_value: z.number().openapi({ description: 'Σ amount of the open opportunities' }),
      weighted_value: z.number().openapi({ description: 'Σ amount × probability / 100 of the open opportunities' }),
      won: closedSum.openapi({ description: 'opportunities in stages at 100 %' }),
      lost: closedSum.openapi({ description: 'opportunities in stages at 0 %' }),
    }),
  })
  .openapi('PipelineSummary');
export type PipelineSummary = z.infer<typeof pipelineSummary>;

export const conversionInput = z
  .object({
    opportunity_name: text(200).min(1).optional(),
    amount: amount.optional(),
    close_date: isoDate.optional(),
    create_account: z.boolean().optional(),
    pipeline_id: uuid().optional(),
  })
  .openapi('LeadConversionInput');
export type ConversionInput = z.output<typeof conversionInput>;

export const conversion = z
  .object({ lead, opportunity, account: z.union([account, z.null()]), account_created: z.boolean() })
  .openapi('LeadConversion');
export type Conversion = z.infer<typeof conversion>;

export const historyEntry = z
  .object({
    id: uuid(),
    field: z.string(),
    from: z.string().nullable(),
    to: z.string(),
    actor: z.string(),
    detail: z.record(z.string(), z.unknown()).optional(),
    at: timestamp,
  })
  .openapi('HistoryEntry');
export type HistoryEntry = z.infer<typeof historyEntry>;

/** One failed lead of a batch. */
export const batchError = z.object({ index: z.number().int(), field: z.string(), message: z.string() }).openapi('LeadBatchError');
export type BatchError = z.infer<typeof batchError>;

/** What a webhook did with one lead: a new lead, or a repeat submission applied to the existing one. */
export const leadOutcome = z.enum(['created', 'updated']);

/** The spec's batch response, plus `updated` and the per-entry `results`. */
export const batchResult = z
  .object({
    success: z.boolean(),
    total: z.number().int(),
    created: z.number().int(),
    updated: z.number().int(),
    failed: z.number().int(),
    lead_ids: z.array(uuid()),
    results: z.array(z.object({ index: z.number().int(), lead_id: uuid(), outcome: leadOutcome })),
    errors: z.array(batchError).nullable(),
  })
  .openapi('LeadBatchResult');
export type BatchResult = z.infer<typeof batchResult>;

export const webhookLeadResult = z
  .object({ success: z.boolean(), lead_id: uuid(), message: z.string(), outcome: leadOutcome })
  .openapi('LeadWebhookResult');
export type WebhookLeadResult = z.infer<typeof webhookLeadResult>;

/** Payload of the crm.ingest-lead-batch job: raw lead objects (each validated on its own by the worker). */
export const leadBatchJob = z.object({
  delivery_id: z.string().min(1).max(200),
  /** X-Source of the request: overrides every lead's source. */
  source: z.string().max(100).nullable(),
  leads: z.array(z.unknown()).min(1),
});
export type LeadBatchJob = z.output<typeof leadBatchJob>;

/**
 * Monitoring recommendations: built-in templates for every new entity (applied as monitors when
 * MONITORS_AUTO_APPLY); the language model's proposals for new entities, asked once per group of
 * entities of one type and template signature (MONITORS_MODEL_AUTO) and instantiated for each;
 * and on request the model's proposals for one entity. Every model rule is validated as a
 * Prometheus alerting rule before it is stored, as a proposal (never applied automatically).
 */
import { config } from '../../config.js';
import { llmClient, llmModel } from '../../clients/llm.js';
import { ServiceUnavailableError, UpstreamError } from '../../errors.js';
import { enqueue } from '../../queues.js';
import { getEntities, getEntity } from '../cmdb/entities.store.js';
import { relationshipsOf } from '../cmdb/relationships.store.js';
import { listRecommendations, storeRecommendations, type NewRecommendation, type Recommendation } from './recommendations.store.js';
import { alertingRuleSchema, validateRule } from './rules.js';
import { templateRecommendations, type TemplateEntity } from './templates.js';

/** Template recommendations for entities discovery just added (and model proposals queued per group); rows written. */
export async function recommendForNewEntities(entities: TemplateEntity[]): Promise<number> {
  await queueModelProposals(entities);
  const items: NewRecommendation[] = entities.flatMap((e) =>
    templateRecommendations(e).map((t) => ({ entity_id: e.id, origin: 'template' as const, template: t.template, rule: t.rule, rationale: t.rationale })),
  );
  let written = 0;
  // Chunks keep one statement's JSON parameter moderate on a first run over thousands of entities.
  for (let i = 0; i < items.length; i += 2000) {
    const { recommendations, monitors } = await storeRecommendations(items.slice(i, i + 2000), config().sre.monitors.autoApply);
    written += recommendations.length + monitors;
  }
  return written;
}

export interface Rejected {
  alert: string | null;
  error: string;
}

const instructions = `You are an SRE assistant. Propose Prometheus alerting rules for the infrastructure entity described by the user.
Answer with one JSON object: {"rules": [{"alert": "CamelCaseName", "expr": "PromQL", "for": "5m", "labels": {"severity": "warning|critical"}, "annotations": {"summary": "..."}, "rationale": "why"}]}.
Propose at most 5 rules, none duplicating the existing ones, using metrics an exporter for this kind of entity really exposes.`;

/** One JSON-mode chat completion; the `rules` array of its answer. */
async function askModel(system: string, user: unknown): Promise<unknown[]> {
  const client = llmClient();
  if (!client) throw new ServiceUnavailableError('No language model is configured (LLM_PROVIDER=none).');
  let content: string | null | undefined;
  try {
    const completion = await client.chat.completions.create({
      model: llmModel(),
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: JSON.stringify(user) },
      ],
      response_format: { type: 'json_object' },
      temperature: 0.2,
    });
    content = completion.choices[0]?.message?.content;
  } catch (err) {
    throw new UpstreamError(`The language model call failed: ${(err as Error).message}`);
  }
  try {
    const parsed = JSON.parse(content ?? '') as { rules?: unknown };
    return Array.isArray(parsed.rules) ? parsed.rules : [];
  } catch {
    throw new UpstreamError('The language model did not answer JSON.');
  }
}

/** Asks the configured language model for further rules for one entity; stores the valid ones, returns the rejected. */
export async function proposeWithModel(entityId: string): Promise<{ stored: Recommendation[]; rejected: Rejected[] }> {
  if (!llmClient()) throw new ServiceUnavailableError('No language model is configured (LLM_PROVIDER=none).');
  const entity = await getEntity(entityId);
  const [relationships, existing] = await Promise.all([relationshipsOf(entityId), listRecommendations({ entity_id: entityId, limit: 100, offset: 0 })]);
  const description = {
    type: entity.type,
    name: entity.name,
    source: entity.source,
    health: entity.health,
    attributes: entity.attributes,
    relationships: relationships.map((r) => `${r.direction === 'outgoing' ? '' : '<- '}${r.type} ${r.entity_type} ${r.entity_name}`),
    existing_rules: existing.map((r) => ({ alert: r.alert, expr: r.rule.expr })),
  };
  const proposals = await askModel(instructions, description);

  const accepted: NewRecommendation[] = [];
  const rejected: Rejected[] = [];
  for (const proposal of proposals.slice(0, 10)) {
    const { rationale, ...candidate } = (proposal ?? {}) as Record<string, unknown>;
    const alert = typeof candidate.alert === 'string' ? candidate.alert : null;
    const check = await validateRule(candidate);
    if (!check.ok) rejected.push({ alert, error: check.error });
    else accepted.push({ entity_id: entityId, origin: 'llm', template: 'llm', rule: check.rule, rationale: typeof rationale === 'string' ? rationale.slice(0, 2000) : '' });
  }
  const { recommendations } = await storeRecommendations(accepted, false);
  const storedAlerts = new Set(recommendations.map((r) => r.alert));
  for (const a of accepted) if (!storedAlerts.has(a.rule.alert)) rejected.push({ alert: a.rule.alert, error: 'the entity already has a recommendation of this name' });
  return { stored: recommendations, rejected };
}

/** Entities of one type whose templates are the same get the same model answer. */
export function modelSignature(e: TemplateEntity): string {
  return `${e.type}|${templateRecommendations(e).map((t) => t.template).sort().join(',')}`;
}

/** Queues one model call per group of new entities (type and template signature); returns the number of groups. */
export async function queueModelProposals(entities: TemplateEntity[]): Promise<number> {
  if (!entities.length || !config().sre.monitors.modelAuto || !llmClient()) return 0;
  const groups = new Map<string, string[]>();
  for (const e of entities) groups.set(modelSignature(e), [...(groups.get(modelSignature(e)) ?? []), e.id]);
  for (const [signature, entity_ids] of groups) await enqueue('sre.monitors-propose', { signature, entity_ids });
  return groups.size;
}

const groupInstructions = `You are an SRE assistant. Propose Prometheus alerting rules for a group of infrastructure entities of one type; the user gives one example entity and how many there are.
Write each rule once, for any entity of the group, naming the entity with placeholders inside PromQL label values and annotations: {{name}}, {{natural_key}}, or {{attributes.KEY}} for a string attribute of the example.
Answer with one JSON object: {"rules": [{"alert": "CamelCaseName", "expr": "PromQL", "for": "5m", "labels": {"severity": "warning|critical"}, "annotations": {"summary": "..."}, "rationale": "why"}]}.
Propose at most 5 rules, none duplicating the existing ones, using metrics an exporter for this kind of entity really exposes.`;

const placeholder = /\{\{\s*(name|natural_key|attributes\.[A-Za-z0-9_]+)\s*\}\}/g;

/** The value of a placeholder for an entity (attributes that are not strings or numbers give ""). */
function placeholderValue(e: TemplateEntity, key: string): string {
  if (key === 'name') return e.name;
  if (key === 'natural_key') return e.natural_key;
  const v = e.attributes[key.slice('attributes.'.length)];
  return typeof v === 'string' || typeof v === 'number' ? String(v) : '';
}

/** A rule with its placeholders filled for one entity; in the expression values are escaped as in a PromQL string. */
function instantiate(rule: Record<string, unknown>, e: TemplateEntity): Record<string, unknown> {
  const fill = (text: string, escape: boolean) => text.replace(placeholder, (_m, key: string) => {
    const v = placeholderValue(e, key);
    return escape ? JSON.stringify(v).slice(1, -1) : v;
  });
  const texts = (o: unknown) => (o && typeof o === 'object' ? Object.fromEntries(Object.entries(o).map(([k, v]) => [k, typeof v === 'string' ? fill(v, false) : v])) : o);
  return { ...rule, expr: typeof rule.expr === 'string' ? fill(rule.expr, true) : rule.expr, labels: texts(rule.labels), annotations: texts(rule.annotations) };
}

/**
 * Job: one model call for a group of new entities of one type and template signature. Each proposed
 * rule must name the entity (a placeholder in its expression); it is validated (promtool) as
 * instantiated for the first entity, then stored, instantiated, as a proposal for every entity of
 * the group. Entities gone since (deleted or stale) are skipped.
 */
export async function proposeForGroup(p: { signature: string; entity_ids: string[] }): Promise<{ entities: number; stored: number; rejected: Rejected[] }> {
  const entities = (await getEntities(p.entity_ids)).filter((e) => !e.stale) as Array<TemplateEntity & { stale: boolean }>;
  const sample = entities[0];
  if (!sample) return { entities: 0, stored: 0, rejected: [] };
  const proposals = await askModel(groupInstructions, {
    type: sample.type,
    entities: entities.length,
    example: { name: sample.name, natural_key: sample.natural_key, attributes: sample.attributes },
    existing_rules: templateRecommendations(sample).map((t) => ({ alert: t.rule.alert, expr: t.rule.expr })),
  });
  const accepted: Array<{ rule: Record<string, unknown>; rationale: string }> = [];
  const rejected: Rejected[] = [];
  for (const proposal of proposals.slice(0, 10)) {
    const { rationale, ...candidate } = (proposal ?? {}) as Record<string, unknown>;
    const alert = typeof candidate.alert === 'string' ? candidate.alert : null;
    if (typeof candidate.expr !== 'string' || !candidate.expr.match(placeholder)) {
      rejected.push({ alert, error: 'the expression does not name the entity with a placeholder' });
      continue;
    }
    const check = await validateRule(instantiate(candidate, sample));
    if (!check.ok) rejected.push({ alert, error: check.error });
    else accepted.push({ rule: candidate, rationale: typeof rationale === 'string' ? rationale.slice(0, 2000) : '' });
  }
  const items: NewRecommendation[] = entities.flatMap((e) =>
    accepted.map((a) => ({ entity_id: e.id, origin: 'llm' as const, template: 'llm', rule: alertingRuleSchema.parse(instantiate(a.rule, e)), rationale: a.rationale })),
  );
  let stored = 0;
  for (let i = 0; i < items.length; i += 2000) stored += (await storeRecommendations(items.slice(i, i + 2000), false)).recommendations.length;
  return { entities: entities.length, stored, rejected };
}

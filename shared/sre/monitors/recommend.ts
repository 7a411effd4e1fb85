/**
 * Monitoring recommendations: built-in templates for every new entity (applied as monitors when
 * MONITORS_AUTO_APPLY), and on request the language model's proposals for one entity, each
 * validated as a Prometheus alerting rule before it is stored.
 */
import { config } from '../../config.js';
import { llmClient, llmModel } from '../../clients/llm.js';
import { ServiceUnavailableError, UpstreamError } from '../../errors.js';
import { getEntity } from '../cmdb/entities.store.js';
import { relationshipsOf } from '../cmdb/relationships.store.js';
import { listRecommendations, storeRecommendations, type NewRecommendation, type Recommendation } from './recommendations.store.js';
import { validateRule } from './rules.js';
import { templateRecommendations, type TemplateEntity } from './templates.js';

/** Template recommendations for entities discovery just added; rows written. */
export async function recommendForNewEntities(entities: TemplateEntity[]): Promise<number> {
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

/** Asks the configured language model for further rules for one entity; stores the valid ones, returns the rejected. */
export async function proposeWithModel(entityId: string): Promise<{ stored: Recommendation[]; rejected: Rejected[] }> {
  const client = llmClient();
  if (!client) throw new ServiceUnavailableError('No language model is configured (LLM_PROVIDER=none).');
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
  let content: string | null | undefined;
  try {
    const completion = await client.chat.completions.create({
      model: llmModel(),
      messages: [
        { role: 'system', content: instructions },
        { role: 'user', content: JSON.stringify(description) },
      ],
      response_format: { type: 'json_object' },
      temperature: 0.2,
    });
    content = completion.choices[0]?.message?.content;
  } catch (err) {
    throw new UpstreamError(`The language model call failed: ${(err as Error).message}`);
  }
  let proposals: unknown[];
  try {
    const parsed = JSON.parse(content ?? '') as { rules?: unknown };
    proposals = Array.isArray(parsed.rules) ? parsed.rules : [];
  } catch {
    throw new UpstreamError('The language model did not answer JSON.');
  }

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

// needs: prometheus
import { describe, expect, it } from 'vitest';
import { entityTypes, type EntityType } from '../../shared/sre/cmdb/cmdb.schemas.js';
import { templateCatalog, templateRecommendations } from '../../shared/sre/monitors/templates.js';
import { validateRule } from '../../shared/sre/monitors/rules.js';

// One entity of each type as discovery reports it (attributes as the readers write them).
const samples: Record<EntityType, Record<string, unknown>> = {
  container: { healthcheck: true, addresses: [] },
  compose_project: { services: ['web', 'db'], containers: 2 },
  scrape_job: { targets: 0, configured: true },
  scrape_target: { job: 'node', instance: 'host-1:9100' },
  router: { rule: 'Host(`shop.example.com`)' },
  proxy_service: { servers: ['http://10.0.0.5:80'] },
  hostname: { routers: ['shop@docker'] },
};

describe('built-in monitoring templates', () => {
  it.each(entityTypes)('%s has templates, each named in the catalog with its exporter, each a rule promtool accepts', async (type) => {
    const recs = templateRecommendations({ id: '00000000-0000-4000-8000-000000000001', type, name: type === 'hostname' ? 'shop.example.com' : `x-${type}`, natural_key: 'k', attributes: samples[type] });
    expect(recs.length).toBeGreaterThan(0);
    for (const r of recs) {
      const entry = templateCatalog.find((t) => t.template === r.template);
      expect(entry, r.template).toMatchObject({ entity_type: type, alert: r.rule.alert, exporter: expect.any(String) });
      for (const metric of entry!.metrics) expect(r.rule.expr).toContain(metric.split(' ')[0]);
      const check = await validateRule(r.rule);
      expect(check.ok, JSON.stringify(check)).toBe(true);
    }
  });

  it('the hostname probe matches the name literally (dots escaped), with or without scheme and port', () => {
    const [rec] = templateRecommendations({ id: 'x', type: 'hostname', name: 'a.b.example', natural_key: 'a.b.example', attributes: {} });
    const pattern = new RegExp(`^(?:${JSON.parse(/instance=~("(?:[^"\\\\]|\\\\.)*")/.exec(rec!.rule.expr)![1]!)})$`);
    expect(['a.b.example', 'https://a.b.example', 'http://a.b.example:8080/health'].every((s) => pattern.test(s))).toBe(true);
    expect(pattern.test('aXb.example')).toBe(false);
  });
});

/**
 * The import rules of .dependency-cruiser.cjs (`npm run lint:cycles` prints the same): no module
 * reaches itself through its imports, shared/ imports neither api/ nor workers/, workers/ never api/.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { cruise, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const rules = createRequire(import.meta.url)('../../.dependency-cruiser.cjs');

/** One line per violation, as a reader would follow it: `rule: a → b → … → a`. */
const describeViolation = (v: IViolation) => `${v.rule.name}: ${[v.from, ...(v.cycle?.map((c) => c.name) ?? [v.to])].join(' → ')}`;

describe('import rules', () => {
  it('no module imports itself through others, and shared/ never imports a role', async () => {
    const result = await cruise(['api', 'workers', 'shared', 'test'], { ...rules.options, ruleSet: { forbidden: rules.forbidden }, validate: true }, undefined, {
      tsConfig: extractTSConfig('tsconfig.json'),
    });
    const output = result.output as ICruiseResult;
    // A cruise that found nothing would pass any rule: it must have read the whole tree.
    expect(output.summary.totalCruised).toBeGreaterThan(300);
    expect(output.summary.violations.map(describeViolation)).toEqual([]);
  }, 60_000);
});

import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { roleNodeFlags } from '../../shared/cli/roles.js';

const root = path.resolve(import.meta.dirname, '../..');

/**
 * A process grows its young generation with a burst of surviving allocations, then stays quiet for
 * up to 5 s while it waits for it to shrink; it prints the young generation's size (MB) after the
 * burst and at the end.
 */
const burstThenQuiet = (quietForMs: number) => `
  import { returnYoungGenerationWhenQuiet, youngGenerationBytes } from ${JSON.stringify(path.join(root, 'shared/idle-memory.ts'))};
  const mb = () => Math.round(youngGenerationBytes() / 2 ** 20);
  const kept = [];
  for (let i = 0; i < 400_000; i++) { kept.push({ i, s: 'stream ' + i }); JSON.parse(JSON.stringify({ i, garbage: [i, i] })); }
  const grown = mb();
  returnYoungGenerationWhenQuiet({ everyMs: 250, quietForMs: ${quietForMs} });
  const started = Date.now();
  while (Date.now() - started < 5_000 && mb() > 1) await new Promise((resolve) => setTimeout(resolve, 250));
  console.log(JSON.stringify({ grown, after: mb(), kept: kept.length }));
`;

/** The roles' Node flags without the gc() that the module needs. */
const withoutGc = roleNodeFlags.filter((flag) => flag !== '--expose-gc');

function run(nodeFlags: readonly string[], quietForMs = 1_000): { grown: number; after: number } {
  const out = spawnSync(process.execPath, [...nodeFlags, '--import', 'tsx', '--input-type=module', '-e', burstThenQuiet(quietForMs)], { cwd: root, encoding: 'utf8', timeout: 30_000 });
  if (out.status !== 0) throw new Error(out.stderr);
  return JSON.parse(out.stdout.trim().split('\n').at(-1)!);
}

describe('a quiet role returns its young generation (issue 18 point 5)', () => {
  it('shrinks a grown young generation to 1 MB once the event loop has been quiet for quietForMs, with gc() exposed as the roles run', () => {
    const { grown, after } = run(roleNodeFlags);
    expect(grown).toBeGreaterThanOrEqual(32);
    expect(after).toBeLessThanOrEqual(2);
  }, 40_000);

  it('keeps it through a shorter lull (a quiet 5 s is not yet quietForMs = 60 s)', () => {
    const { grown, after } = run(roleNodeFlags, 60_000);
    expect(grown).toBeGreaterThanOrEqual(32);
    expect(after).toBe(grown);
  }, 40_000);

  it('does nothing without --expose-gc, and V8 alone keeps it grown (what the scavenges are for)', () => {
    const { grown, after } = run(withoutGc);
    expect(grown).toBeGreaterThanOrEqual(32);
    expect(after).toBe(grown);
  }, 40_000);

  it('is what every Procfile role runs with: the Procfile repeats the roles\' Node flags', () => {
    const procfile = readFileSync(path.join(root, 'Procfile'), 'utf8');
    const nodeRoles = procfile.split('\n').filter((line) => /^(web|worker|tools):/.test(line));
    expect(nodeRoles).toHaveLength(3);
    for (const line of nodeRoles) expect(line).toContain(`node ${roleNodeFlags.join(' ')} dist/`);
  });
});

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  engines: { node: string };
  devDependencies: Record<string, string>;
};
const major = (version: string) => Number(/(\d+)/.exec(version)![1]);

describe('runtime', () => {
  it('the suite runs on the Node of the node dev dependency (24), not an older system Node', () => {
    // npm puts node_modules/.bin first on PATH, where the `node` package links its binary.
    expect(major(process.version)).toBe(major(pkg.devDependencies.node!));
    expect(major(process.version)).toBeGreaterThanOrEqual(24);
  });

  it('engines names the oldest supported Node (22) and the running one satisfies it', () => {
    expect(pkg.engines.node).toMatch(/^>=22\./);
    const [minMajor, minMinor] = pkg.engines.node.slice(2).split('.').map(Number);
    const [curMajor, curMinor] = process.versions.node.split('.').map(Number);
    expect(curMajor! > minMajor! || (curMajor === minMajor && curMinor! >= minMinor!)).toBe(true);
  });
});

/**
 * One kind of file holds a resource's schemas (STYLE.md point 5, issue 38): a route file declares its
 * routes with the schemas of the `<resource>.schemas.ts` beside it and builds no `z.object(` itself.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';


interface SourceFile {
  file: string;
  text: string;
}

const apiFiles = (): SourceFile[] =>
  (readdirSync('api', { recursive: true }) as string[])
    .map((f) => path.join('api', f).split(path.sep).join('/'))
    .filter((file) => file.endsWith('.routes.ts'))
    .map((file) => ({ file, text: readFileSync(file, 'utf8') }));

/** `file:line` of every `z.object(` (also split over lines, `z\n  .object(`) in a route file outside the exclusions. */
function inlineObjects(files: SourceFile[]): string[] {
  return files
    .filter(({ file }) => file.endsWith('.routes.ts'))
    .flatMap(({ file, text }) => [...text.matchAll(/\bz\s*\.\s*object\s*\(/g)].map((m) => `${file}:${text.slice(0, m.index).split('\n').length}`));
}

describe('route schemas live in <resource>.schemas.ts', () => {
  it('no route file under api/ builds a z.object of its own', () => {
    const files = apiFiles();
    expect(files.length).toBeGreaterThan(25);
    expect(inlineObjects(files), 'move these schemas into the <resource>.schemas.ts beside the route file').toEqual([]);
  });

  it('an inline z.object in a route file fails the check, naming the file and line; schema files are not checked', () => {
    const inline = { file: 'api/crm/stray.routes.ts', text: "import { z } from 'zod';\nconst q = z.object({ q: z.string() });\nconst e = z\n  .object({ id: z.string() });\n" };
    expect(inlineObjects([inline])).toEqual(['api/crm/stray.routes.ts:2', 'api/crm/stray.routes.ts:3']);
    expect(inlineObjects([{ ...inline, file: 'api/crm/stray.schemas.ts' }])).toEqual([]);
  });
});

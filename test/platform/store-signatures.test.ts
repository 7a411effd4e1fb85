/**
 * Store functions take their arguments in one order (README › Conventions): a transaction the caller
 * must hold comes first, then the owner that scopes the rows (`ownerId`), then the record, then the
 * data; a connection that defaults to the pool (`k = db()`) comes last.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const storeFiles = (readdirSync('shared', { recursive: true }) as string[]).filter((f) => f.endsWith('.store.ts') || f.endsWith('.sql.ts')).map((f) => path.join('shared', f));

/** `file function: what is out of order` for every exported function of a store breaking the order. */
function outOfOrder(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  source.forEachChild((node) => {
    if (!ts.isFunctionDeclaration(node) || !node.name || !node.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) return;
    const params = node.parameters.map((p) => ({
      name: p.name.getText(source),
      connection: !!p.type && /^Knex\b/.test(p.type.getText(source)),
      optional: !!p.initializer || !!p.questionToken,
    }));
    const where = `${file} ${node.name.text}`;
    params.forEach((p, i) => {
      if (p.connection && p.optional && i !== params.length - 1) found.push(`${where}: optional connection ${p.name} not last`);
      if (p.connection && !p.optional && i !== 0) found.push(`${where}: transaction ${p.name} not first`);
    });
    const owner = params.findIndex((p) => p.name === 'ownerId');
    const before = params.slice(0, Math.max(owner, 0)).filter((p) => !(p.connection && !p.optional));
    if (owner >= 0 && before.length) found.push(`${where}: ownerId after ${before.map((p) => p.name).join(', ')}`);
  });
  return found;
}

describe('store signatures', () => {
  it('every store function takes a held transaction first, the owner next, and a defaulted connection last', () => {
    expect(storeFiles.length).toBeGreaterThan(30);
    expect(storeFiles.flatMap(outOfOrder)).toEqual([]);
  });
});

/**
 * Which modules write which table: the check behind "one store per aggregate". Tables come from the
 * migrations; writes are knex chains ending in insert/update/del/delete (merge rides on an insert) and
 * SQL text with insert into / update / delete from, found by parsing shared/, api/ and workers/.
 * Named operation files (`*.sql.ts`) may span aggregates and are listed apart.
 * Run as a script (`npx tsx test/helpers/table-writers.ts`) to print the whole map.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('../..', import.meta.url));
const scanned = ['shared', 'api', 'workers'];
const skipped = ['api/web'];
const knexWrites = new Set(['insert', 'update', 'del', 'delete']);
const knexTableCalls = new Set(['into', 'table', 'from']);

export const isOperationFile = (file: string) => file.endsWith('.sql.ts');

function filesUnder(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (skipped.includes(path)) return [];
    if (e.isDirectory()) return filesUnder(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every table the migrations create. */
export function migratedTables(): string[] {
  const tables = new Set<string>();
  for (const file of filesUnder('migrations')) {
    const text = readFileSync(join(root, file), 'utf8');
    for (const m of text.matchAll(/createTable\(\s*['"`]([a-z_][a-z0-9_]*)['"`]/g)) tables.add(m[1]!);
    for (const m of text.matchAll(/\bcreate\s+table\s+(?:if\s+not\s+exists\s+)?([a-z_][a-z0-9_]*)/gi)) tables.add(m[1]!.toLowerCase());
  }
  return [...tables].sort();
}

const unknown = '\u0000';

/** The text of a string-like expression, with `${CONST}` filled in where the file declares the const. */
function textOf(node: ts.Node, consts: Map<string, string>): string | undefined {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isIdentifier(node)) return consts.get(node.text);
  if (ts.isTemplateExpression(node)) {
    return node.head.text + node.templateSpans.map((s) => (textOf(s.expression, consts) ?? unknown) + s.literal.text).join('');
  }
  return undefined;
}

export interface Write {
  table: string;
  file: string;
  line: number;
}

/** Each write found in one source file; `unresolved` holds the lines of writes whose table could not be read. */
export function writesIn(file: string, tables: ReadonlySet<string>, text = readFileSync(join(root, file), 'utf8')): { writes: Write[]; unresolved: number[] } {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const consts = new Map<string, string>();
  const collect = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) {
      const value = textOf(node.initializer, consts);
      if (value !== undefined && !value.includes(unknown)) consts.set(node.name.text, value);
    }
    ts.forEachChild(node, collect);
  };
  collect(source);

  const writes: Write[] = [];
  const unresolved: number[] = [];
  const lineOf = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
  const tableIn = (arg: ts.Node | undefined) => {
    const text = arg && textOf(arg, consts);
    const name = text?.trim().split(/\s+/)[0];
    return name && tables.has(name) ? name : undefined;
  };

  /** `db()`, `k`, `trx`…: what a query builder is called on, so a digest's `.update()` is not taken for a write. */
  const queryRoot = (callee: ts.Expression) =>
    ts.isCallExpression(callee) ? ts.isIdentifier(callee.expression) && callee.expression.text === 'db' : ts.isIdentifier(callee) && /^(db|k|knex|trx|tx)$/.test(callee.text);

  const initializers = new Map<string, ts.Expression>();
  const bind = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) initializers.set(node.name.text, node.initializer);
    ts.forEachChild(node, bind);
  };
  bind(source);

  /**
   * The table a knex write chain names: its root call `k('t')`, or `.into/.table/.from('t')` anywhere on
   * it, following a builder kept in a variable (`const q = k(T).where(…); q.update(…)`). `named` tells
   * whether the chain starts at a query builder given an argument, so its table should have been read.
   */
  const knexTable = (call: ts.CallExpression): { table?: string; named: boolean } => {
    let table: string | undefined;
    let named = false;
    const followed = new Set<string>();
    let node: ts.Expression = (call.expression as ts.PropertyAccessExpression).expression;
    for (;;) {
      if (ts.isCallExpression(node)) {
        if (ts.isPropertyAccessExpression(node.expression)) {
          if (knexTableCalls.has(node.expression.name.text)) table ??= tableIn(node.arguments[0]);
          node = node.expression.expression;
        } else {
          if (node.arguments.length && queryRoot(node.expression)) named = true;
          table ??= tableIn(node.arguments[0]);
          node = node.expression;
        }
      } else if (ts.isPropertyAccessExpression(node) || ts.isNonNullExpression(node) || ts.isParenthesizedExpression(node) || ts.isAwaitExpression(node) || ts.isAsExpression(node)) {
        node = node.expression;
      } else if (ts.isIdentifier(node) && initializers.has(node.text) && !followed.has(node.text)) {
        followed.add(node.text);
        node = initializers.get(node.text)!;
      } else break;
    }
    let up: ts.Node = call;
    while (ts.isPropertyAccessExpression(up.parent) && ts.isCallExpression(up.parent.parent)) {
      if (knexTableCalls.has(up.parent.name.text)) table ??= tableIn(up.parent.parent.arguments[0]);
      up = up.parent.parent;
    }
    return { table, named };
  };

  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && knexWrites.has(node.expression.name.text)) {
      const { table, named } = knexTable(node);
      if (table) writes.push({ table, file, line: lineOf(node) });
      else if (named) unresolved.push(lineOf(node));
    }
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateExpression(node)) {
      const text = textOf(node, consts) ?? '';
      for (const m of text.matchAll(/\b(?:insert\s+into|update|delete\s+from|merge\s+into|truncate(?:\s+table)?)\s+(?:only\s+)?([a-z_][a-z0-9_]*)/gi)) {
        const table = m[1]!.toLowerCase();
        if (tables.has(table)) writes.push({ table, file, line: lineOf(node) + text.slice(0, m.index).split('\n').length - 1 });
      }
      // A table named at run time (`delete from ??`) cannot be checked: only an operation file may do that.
      if (!isOperationFile(file) && /\b(?:insert\s+into|update|delete\s+from)\s+\?\?/i.test(text)) unresolved.push(lineOf(node));
      if (ts.isTemplateExpression(node)) return void node.templateSpans.forEach((s) => visit(s.expression));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { writes, unresolved };
}

export interface WriterReport {
  tables: string[];
  /** table → the modules (files) that write it, operation files left out. */
  writers: Map<string, string[]>;
  /** table → the operation files that write it. */
  operations: Map<string, string[]>;
  /** Tables written by more than one module outside operation files. */
  shared: Array<{ table: string; modules: string[] }>;
  unresolved: string[];
}

/** Results per file read from disk: a test file asks several times, the tree does not change meanwhile. */
const parsed = new Map<string, ReturnType<typeof writesIn>>();

/** The writers of every table in shared/, api/ and workers/, plus `extra` sources (a test's made-up module). */
export function tableWriters(extra: ReadonlyArray<{ file: string; text: string }> = []): WriterReport {
  const tables = migratedTables();
  const known = new Set(tables);
  const writers = new Map<string, string[]>();
  const operations = new Map<string, string[]>();
  const unresolved: string[] = [];
  const sources = [...scanned.flatMap(filesUnder).map((file) => ({ file, text: undefined })), ...extra];
  for (const { file, text } of sources) {
    const found = text === undefined ? (parsed.get(file) ?? parsed.set(file, writesIn(file, known)).get(file)!) : writesIn(file, known, text);
    unresolved.push(...found.unresolved.map((line) => `${file}:${line}`));
    for (const table of new Set(found.writes.map((w) => w.table))) {
      const into = isOperationFile(file) ? operations : writers;
      into.set(table, [...(into.get(table) ?? []), file]);
    }
  }
  const shared = [...writers].filter(([, modules]) => modules.length > 1).map(([table, modules]) => ({ table, modules }));
  return { tables, writers, operations, shared, unresolved };
}

export function describeReport(report: WriterReport): string {
  const lines = [
    `${report.shared.length} of ${report.tables.length} tables are written by more than one module outside operation files (*.sql.ts)`,
    ...report.shared.map(({ table, modules }) => `  ${table}: ${modules.join(', ')}`),
  ];
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const report = tableWriters();
  console.log(describeReport(report));
  console.log('\nwriters per table:');
  for (const table of report.tables) {
    const modules = report.writers.get(table) ?? [];
    const ops = report.operations.get(table) ?? [];
    console.log(`  ${table}: ${[...modules, ...ops.map((o) => `${o} (operation)`)].join(', ') || '(none)'}`);
  }
  if (report.unresolved.length) console.log(`\nwrites whose table could not be read:\n  ${report.unresolved.join('\n  ')}`);
}

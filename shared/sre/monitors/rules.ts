/**
 * Prometheus alerting rules: their shape, the rule file we write, and validation by `promtool check
 * rules` (the metrics system's own checker) when it is installed. Rule files are written as JSON,
 * which is YAML, so no YAML library is needed and the file is byte-for-byte deterministic.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { z } from '../../zod.js';

const run = promisify(execFile);

const duration = z.string().regex(/^((\d+)(ms|s|m|h|d|w|y))+$/, 'must be a Prometheus duration such as 5m or 1h30m');
const labelName = z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_]*$/, 'must be a Prometheus label name');

/** One alerting rule as Prometheus reads it. */
export const alertingRuleSchema = z
  .object({
    alert: z.string().regex(/^[a-zA-Z_:][a-zA-Z0-9_:]*$/, 'must be a metric-style name such as ContainerDown').max(200),
    expr: z.string().min(1).max(4000),
    for: duration.optional(),
    labels: z.record(labelName, z.string().max(1000)).default({}),
    annotations: z.record(labelName, z.string().max(4000)).default({}),
  })
  .strict()
  .openapi('AlertingRule');
export type AlertingRule = z.output<typeof alertingRuleSchema>;

/** A rule file with one group: the JSON text Prometheus loads from RULES_DIR. */
export function ruleFileText(group: string, rules: AlertingRule[]): string {
  return `${JSON.stringify({ groups: [{ name: group, rules }] }, null, 2)}\n`;
}

const promtoolPaths = ['/usr/bin/promtool', '/usr/local/bin/promtool'];

/** The promtool binary, or null when the metrics system's tools are not installed. */
export function promtoolPath(): string | null {
  const fromPath = (process.env.PATH ?? '').split(path.delimiter).map((d) => path.join(d, 'promtool'));
  return [...fromPath, ...promtoolPaths].find((p) => existsSync(p)) ?? null;
}

export type CheckResult = { ok: true; checker: 'promtool' | 'schema' } | { ok: false; checker: 'promtool' | 'schema'; error: string };

/** Runs `promtool check rules` on a rule file; without promtool only the schema check has run. */
export async function checkRuleFile(file: string): Promise<CheckResult> {
  const promtool = promtoolPath();
  if (!promtool) return { ok: true, checker: 'schema' };
  try {
    await run(promtool, ['check', 'rules', file], { timeout: 30_000, maxBuffer: 16 * 1024 * 1024 });
    return { ok: true, checker: 'promtool' };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    const text = `${e.stderr ?? ''}\n${e.stdout ?? ''}`.trim() || e.message;
    return { ok: false, checker: 'promtool', error: text.replaceAll(file, '<rules>').slice(0, 2000) };
  }
}

/** Validates one rule: its shape, then promtool on a file holding only it. */
export async function validateRule(candidate: unknown): Promise<{ ok: true; rule: AlertingRule; checker: CheckResult['checker'] } | { ok: false; error: string }> {
  const parsed = alertingRuleSchema.safeParse(candidate);
  if (!parsed.success) return { ok: false, error: parsed.error.issues.map((i) => `${i.path.join('.') || '(rule)'}: ${i.message}`).join('; ') };
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sb-rule-'));
  try {
    const file = path.join(dir, 'rule.yml');
    await writeFile(file, ruleFileText('validation', [parsed.data]));
    const result = await checkRuleFile(file);
    return result.ok ? { ok: true, rule: parsed.data, checker: result.checker } : { ok: false, error: result.error };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

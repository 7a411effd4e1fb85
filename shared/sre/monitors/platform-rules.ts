/**
 * The platform's alert rules about itself (deploy/monitoring/switchboard-alerts.yml), installed by
 * deploy-all beside the monitors' rule file when MONITORS_PLATFORM_RULES is on, so the Prometheus
 * that loads the platform's deploys also watches the platform.
 */
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';
import { UpstreamError } from '../../errors.js';
import { checkRuleFile } from './rules.js';

const here = path.dirname(fileURLToPath(import.meta.url));
/** The bundled rules: deploy/ beside shared/ in source, beside dist/ when compiled (the image copies it). */
export const platformRulesSource = [path.join(here, '../../../deploy/monitoring/switchboard-alerts.yml'), path.join(here, '../../../../deploy/monitoring/switchboard-alerts.yml')].find((p) => existsSync(p));
/** Name of the file in RULES_DIR. */
export const platformRulesFile = 'switchboard-platform.yml';

/** Writes the platform's rules into `rulesDir` when they differ (checked by promtool, swapped in atomically); says whether the file changed. */
export async function installPlatformRules(rulesDir: string): Promise<{ file: string; changed: boolean }> {
  if (!platformRulesSource) throw new UpstreamError('The platform alert rules (deploy/monitoring/switchboard-alerts.yml) are missing from this installation.');
  const file = path.join(path.resolve(rulesDir), platformRulesFile);
  const text = await readFile(platformRulesSource, 'utf8');
  const current = await readFile(file, 'utf8').catch(() => null);
  if (current === text) return { file, changed: false };
  await mkdir(path.dirname(file), { recursive: true });
  const candidate = `${file}.${randomBytes(4).toString('hex')}.candidate`;
  try {
    await writeFile(candidate, text);
    const check = await checkRuleFile(candidate);
    if (!check.ok) throw new UpstreamError(`promtool rejected the platform rules: ${check.error}`);
    await rename(candidate, file);
  } finally {
    await rm(candidate, { force: true });
  }
  return { file, changed: true };
}

/**
 * The Debian packages some test files need. A file says which in a `// needs: <package> …` line near
 * its top; `vitest.config.ts` leaves such a file out, with a message, when a package it names is
 * missing, and stops the run instead under CI=true (CI must install them: see `.ci/run`).
 */
import { accessSync, constants, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** Each package, and the executables that show it is installed. */
export const systemPackages: Record<string, string[]> = {
  chromium: [process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'],
  prometheus: ['/usr/bin/prometheus', '/usr/bin/promtool'],
  'prometheus-alertmanager': ['/usr/bin/prometheus-alertmanager'],
  openssl: ['/usr/bin/openssl'],
  // The Redis Sentinel failover test (test/platform/redis-sentinel.test.ts).
  'redis-sentinel': ['/usr/bin/redis-sentinel'],
  // The container image test: rootful podman with the runc runtime, debootstrap for its local base image.
  podman: ['/usr/bin/podman'],
  runc: ['/usr/sbin/runc'],
  debootstrap: ['/usr/sbin/debootstrap'],
};

const isExecutable = (file: string) => {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** The packages of `systemPackages` that are not installed here. */
export function missingPackages(): string[] {
  return Object.entries(systemPackages).filter(([, files]) => !files.every(isExecutable)).map(([name]) => name);
}

const NEEDS = /^\/\/ needs: (.+)$/m;

/** Every test file under `dir` that declares packages, with the packages it names. */
export function declaredNeeds(dir: string): Map<string, string[]> {
  const needs = new Map<string, string[]>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.test.ts')) continue;
    const file = path.join(entry.parentPath, entry.name);
    const match = NEEDS.exec(readFileSync(file, 'utf8').slice(0, 2000));
    if (!match) continue;
    const names = (match[1] ?? '').trim().split(/\s+/);
    const unknown = names.filter((n) => !(n in systemPackages));
    if (unknown.length) throw new Error(`${file}: needs ${unknown.join(', ')}, which test/helpers/system-packages.ts does not list`);
    needs.set(path.relative(process.cwd(), file), names);
  }
  return needs;
}

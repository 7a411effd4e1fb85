/**
 * Builds the browser app (api/web) into dist/web and prints the JavaScript the first page load
 * fetches (the entry script and its modulepreloads), gzipped. Fails above the 350 kB budget:
 * screens are lazy chunks, so growth there does not count, growth in the shell does.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'vite';

const budget = 350 * 1024;
const webRoot = path.resolve('api/web');
const outDir = path.resolve('dist/web');

await build({ configFile: path.join(webRoot, 'vite.config.ts'), logLevel: 'warn' });
const html = await readFile(path.join(outDir, 'index.html'), 'utf8');
const scripts = [...html.matchAll(/<(?:script[^>]+src|link[^>]+rel="modulepreload"[^>]+href)="([^"]+\.js)"/g)].map((m) => m[1]!);
let total = 0;
for (const src of new Set(scripts)) {
  const size = gzipSync(await readFile(path.join(outDir, src))).length;
  total += size;
  console.log(`  ${src}  ${(size / 1024).toFixed(1)} kB gzipped`);
}
console.log(`web app built into dist/web; initial JavaScript ${(total / 1024).toFixed(1)} kB gzipped (budget ${budget / 1024} kB)`);
if (total > budget) {
  console.error('initial JavaScript is over budget: load the new code lazily');
  process.exit(1);
}

/** The browser app's build: root api/web, output dist/web; React's JSX through esbuild (no plugin needed). */
import { defineConfig, type Plugin } from 'vite';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('.', import.meta.url));

/**
 * The build imports each icon from its own module. The package's index re-exports every icon it has,
 * and loading them all makes Rollup open more files at once than a container build step may (EMFILE).
 * Dev keeps the index: its dependency pre-bundling reads the index once.
 */
export function iconsByModule(pkg = '@tabler/icons-react'): Plugin {
  const modules = new Map<string, string>();
  return {
    name: 'switchboard:icons-by-module',
    apply: 'build',
    async buildStart() {
      const index = await this.resolve(pkg, path.join(root, 'index.html'));
      if (!index) this.error(`${pkg} is not installed`);
      const source = await readFile(index.id, 'utf8');
      for (const [, names, file] of source.matchAll(/^export \{ ([^}]+) \} from '(\.[^']+)';$/gm)) {
        for (const [, name] of names!.matchAll(/default as (\w+)/g)) modules.set(name!, path.resolve(path.dirname(index.id), file!));
      }
      if (!modules.size) this.error(`${pkg}: no per-module exports found in ${index.id}`);
    },
    transform(code, id) {
      if (id.includes('/node_modules/') || !code.includes(pkg)) return null;
      const edits: Array<{ start: number; end: number; text: string }> = [];
      for (const node of this.parse(code).body) {
        if (node.type !== 'ImportDeclaration' || node.source.value !== pkg) continue;
        const imports = node.specifiers.map((s) => {
          const imported = s.type === 'ImportSpecifier' && s.imported.type === 'Identifier' ? s.imported.name : undefined;
          const file = imported && modules.get(imported);
          if (!file) this.error(`${id}: import icons from ${pkg} by name (${imported ?? s.local.name} has no module of its own)`);
          return `import ${s.local.name} from ${JSON.stringify(file)};`;
        });
        // Rollup's parser gives every node its offsets; estree's types leave them out.
        const { start, end } = node as typeof node & { start: number; end: number };
        edits.push({ start, end, text: imports.join(' ') });
      }
      if (!edits.length) return null;
      let out = code;
      for (const e of edits.reverse()) out = out.slice(0, e.start) + e.text + out.slice(e.end);
      return { code: out, map: null };
    },
  };
}

export default defineConfig({
  root,
  base: '/',
  esbuild: { jsx: 'automatic' },
  plugins: [iconsByModule()],
  build: {
    outDir: fileURLToPath(new URL('../../dist/web', import.meta.url)),
    emptyOutDir: true,
    chunkSizeWarningLimit: 1500,
    rollupOptions: {
      // Rollup's default lets 1000 file reads run at once: nearly all of the 1024 files a podman build step may open.
      maxParallelFileOps: 100,
      // Libraries mark their modules "use client" for server components; meaningless in a browser-only build.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
  // Every screen is scanned up front, so opening a lazy screen in dev never discovers a new
  // dependency and reloads the page mid-test.
  optimizeDeps: { entries: ['index.html', 'src/**/*.tsx'] },
  // Dev serves the app's own files and its dependencies, nothing else of the checkout (.data holds the
  // embedded databases' files, .env secrets).
  server: {
    fs: {
      strict: true,
      allow: [root, fileURLToPath(new URL('../../node_modules', import.meta.url))],
      deny: ['.env', '.env.*', '*.{crt,pem,key}', '**/.git/**', '**/.data/**'],
    },
  },
  logLevel: 'warn',
});

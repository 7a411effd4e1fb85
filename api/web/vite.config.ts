/** The browser app's build: root api/web, output dist/web; React's JSX through esbuild (no plugin needed). */
import { defineConfig } from 'vite';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/',
  esbuild: { jsx: 'automatic' },
  build: {
    outDir: fileURLToPath(new URL('../../dist/web', import.meta.url)),
    emptyOutDir: true,
    chunkSizeWarningLimit: 1500,
    rollupOptions: {
      // Libraries mark their modules "use client" for server components; meaningless in a browser-only build.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
  // Every screen is scanned up front, so opening a lazy screen in dev never discovers a new
  // dependency and reloads the page mid-test.
  optimizeDeps: { entries: ['index.html', 'src/**/*.tsx'] },
  server: { fs: { allow: [fileURLToPath(new URL('../..', import.meta.url))] } },
  logLevel: 'warn',
});

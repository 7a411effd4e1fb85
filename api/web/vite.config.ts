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
  },
  server: { fs: { allow: [fileURLToPath(new URL('../..', import.meta.url))] } },
  logLevel: 'warn',
});

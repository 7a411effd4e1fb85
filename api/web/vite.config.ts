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

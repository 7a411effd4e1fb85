/**
 * The web app's production build: an icon import loads that icon's module only, so the build opens few
 * files at once and fits a container build step's open-file limit (the image's `npm run build`).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build, type Plugin } from 'vite';
import { describe, expect, it } from 'vitest';
import { iconsByModule } from '../../api/web/vite.config.js';

/** Builds `source` as the entry with the app's icon plugin; returns the ids of the modules Rollup loaded. */
async function loadedModules(source: string): Promise<string[]> {
  // Inside the checkout, so the package resolves from its node_modules as it does for the app.
  const dir = mkdtempSync(path.join(import.meta.dirname, '.build-'));
  const entry = path.join(dir, 'entry.tsx');
  writeFileSync(entry, source);
  let ids: string[] = [];
  const record: Plugin = {
    name: 'record-modules',
    buildEnd() {
      ids = [...this.getModuleIds()];
    },
  };
  try {
    await build({
      configFile: false,
      logLevel: 'silent',
      esbuild: { jsx: 'automatic' },
      plugins: [iconsByModule(), record],
      build: { write: false, lib: { entry, formats: ['es'], fileName: 'entry' }, rollupOptions: { external: [/^react($|\/)/] } },
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return ids;
}

describe('the web build imports icons one module each', () => {
  it('loads only the imported icons (renamed ones too), never the package index that re-exports them all', async () => {
    const ids = await loadedModules(
      "import { IconTrash, IconStar as Star, type Icon } from '@tabler/icons-react';\n" +
        'export const icons: Icon[] = [IconTrash, Star];\nexport const Both = () => <><IconTrash /><Star /></>;\n',
    );
    const tabler = ids.filter((id) => id.includes('@tabler/icons-react')).map((id) => path.basename(id));
    expect(tabler).toEqual(expect.arrayContaining(['IconTrash.mjs', 'IconStar.mjs']));
    expect(tabler).not.toContain('tabler-icons-react.mjs');
    expect(tabler.length).toBeLessThan(6);
  });

  it('fails the build naming an import the package has no module for', async () => {
    await expect(loadedModules("import { IconNoSuchIcon } from '@tabler/icons-react';\nexport default IconNoSuchIcon;\n")).rejects.toThrow(/IconNoSuchIcon/);
  });
});

import { defineConfig } from 'vitest/config';
import { declaredNeeds, missingPackages } from './test/helpers/system-packages.js';

const missing = missingPackages();
const leftOut = [...declaredNeeds('test')].filter(([, names]) => names.some((n) => missing.includes(n)));
if (missing.length) {
  const install = `apt-get install ${missing.join(' ')}`;
  if (process.env.CI === 'true') {
    throw new Error(`npm test needs the Debian packages ${missing.join(', ')} (${install}; .ci/run installs them)`);
  }
  console.warn(
    `npm test: ${missing.join(', ')} not installed (${install}); leaving out ${leftOut.length} test files that need them:\n` +
      leftOut.map(([file, names]) => `  ${file} (needs ${names.join(', ')})`).join('\n'),
  );
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/bench/**', 'node_modules/**', ...leftOut.map(([file]) => file)],
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/per-file.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: { NODE_ENV: 'test' },
  },
});

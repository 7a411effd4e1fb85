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

// Failover and rolling-restart tests kill servers they started on ports picked from the ephemeral
// range, which other files' servers and clients may take the moment they are free, and they time
// processes against each other. Beside the suite a sentinel failover was missed once (the cause not
// found; alone it passed every time), so they run in a group of their own (groups run one after the
// other), one file at a time.
const alone = ['test/platform/redis-sentinel.test.ts', 'test/platform/rolling-restart.test.ts'];
const excluded = ['test/bench/**', 'node_modules/**', ...leftOut.map(([file]) => file)];

export default defineConfig({
  test: {
    projects: [
      { extends: true, test: { name: 'suite', include: ['test/**/*.test.ts'], exclude: [...excluded, ...alone], sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'alone', include: alone, exclude: excluded, fileParallelism: false, sequence: { groupOrder: 1 } } },
    ],
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/per-file.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: { NODE_ENV: 'test' },
  },
});

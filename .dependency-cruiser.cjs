/**
 * Import rules of the server code, checked by `npm run lint:cycles` and by
 * test/platform/no-import-cycles.test.ts (so `npm test` covers them).
 * Type-only imports count too: a cycle through types still ties the modules' design together.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A module never reaches itself through its imports: load registries in the entry files instead.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'shared-not-to-roles',
      severity: 'error',
      comment: 'shared/ serves api/ and workers/; it imports neither.',
      from: { path: '^shared/' },
      to: { path: '^(api|workers)/' },
    },
    {
      name: 'workers-not-to-api',
      severity: 'error',
      comment: 'The worker role does not load the web role.',
      from: { path: '^workers/' },
      to: { path: '^api/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|api/web/)' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
    moduleSystems: ['es6'],
  },
};

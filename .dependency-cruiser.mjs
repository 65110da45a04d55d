// Import cycles, as `npm run lint` refuses them (dependency-cruiser): between any two modules of
// src/, test/, bench/ and migrations/, type-only imports included, and between the folders of src/
// (sites → channels → sites), which make two domain folders one tangle even when no two files import
// each other. ESLint's import-x/no-cycle did the module part for runtime imports, at 21 of lint's
// 33 s; this finds the same cycles and more in about 5 s.
/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-folder-cycle',
      severity: 'error',
      comment: 'Folders of src/ depend on each other one way: move the function to the folder it belongs to.',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-module-cycle',
      severity: 'error',
      comment: 'Two modules that import each other, type-only imports included.',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    // The project's own code: packages are not followed into.
    includeOnly: '^(src|test|bench|migrations)/',
    // Type-only imports count: a cycle of types is still a cycle of meaning.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
}

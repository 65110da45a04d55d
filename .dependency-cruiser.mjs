// Import cycles in src/, as `npm run lint` refuses them (dependency-cruiser). ESLint's
// import-x/no-cycle sees runtime cycles between files; these rules add what it lets through:
// cycles through type-only imports, and cycles between folders (sites → channels → sites), which
// make two domain folders one tangle even when no two files import each other.
/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-folder-cycle',
      severity: 'error',
      comment: 'Folders of src/ depend on each other one way: move the function to the folder it belongs to.',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-module-cycle',
      severity: 'error',
      comment: 'Two modules of src/ that import each other, type-only imports included.',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    // Only src/ is checked: packages are not followed into.
    includeOnly: '^src/',
    // Type-only imports count: a cycle of types is still a cycle of meaning.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
}

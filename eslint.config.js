import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import importX from 'eslint-plugin-import-x'

// The layout rule (docs/design.md section 3), as import directions. Each layer may import the ones
// below it, never one above: interfaces → jobs → imports/exports → domain → shared layers → db.
// Interface folders say which side of the door they are on: *-api/ (JSON, feed files, health and
// metrics) and *-web/ (HTML). src/ops-api/ holds the prom-client registry: it reads the layers below;
// they report to it through observer interfaces of their own and never import it.
const INTERFACES = ['src/*-api/**', 'src/*-web/**', 'src/**/*-routes.ts', 'src/**/*-plugin.ts', 'src/{app,server,main}.ts', 'src/cli/**']
const RUN_STEPS = ['src/imports/**', 'src/exports/**', 'src/rule-sets/**']
const DOMAIN = [
  'src/accounts/**',
  'src/sites/**',
  'src/streams/**',
  'src/channels/**',
  'src/catalog/**',
  'src/feeds/**',
  'src/templates/**',
  'src/webhooks/**',
  'src/rules/**',
  'src/sources/**',
  'src/runs/**',
]
const SHARED = ['src/http/**', 'src/auth/**', 'src/net/**', 'src/input/**', 'src/activity/**', 'src/idempotency/**']

const zones = [
  {
    target: ['src/jobs/**', ...RUN_STEPS, ...DOMAIN, ...SHARED, 'src/db/**'],
    from: INTERFACES,
    message: 'Only interface folders and the app hold HTTP routes and plugins; nothing below them may import one.',
  },
  {
    target: [...RUN_STEPS, ...DOMAIN, ...SHARED, 'src/db/**'],
    from: ['src/jobs/**'],
    message: 'Jobs drive runs; a run step or the domain never imports them.',
  },
  { target: [...DOMAIN, ...SHARED, 'src/db/**'], from: RUN_STEPS, message: 'Imports and exports are the steps of a run, above the domain.' },
  { target: [...SHARED, 'src/db/**'], from: DOMAIN, message: 'Shared layers (http, auth, net, input, db) serve the domain; they never import it.' },
  { target: ['src/db/**'], from: SHARED, message: 'db is the lowest layer.' },
]

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { 'import-x': importX },
    settings: {
      ...importX.flatConfigs.typescript.settings,
      // Resolves the `.js` of relative imports to the `.ts` sources.
      'import-x/resolver': { typescript: { project: './tsconfig.json' } },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': ['error', { allow: ['error'] }],
      'max-len': ['error', { code: 160, ignoreUrls: true, ignoreRegExpLiterals: true }],
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      'import-x/no-restricted-paths': ['error', { zones }],
      // A function longer than a screen is split into named parts (aim for ~60 lines).
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true, IIFEs: true }],
    },
  },
  {
    // A route plugin is registered by its interface's plugin; a route file importing its plugin is a cycle.
    files: ['src/**/*-routes.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['./*-plugin.js', '../*/*-plugin.js'], message: 'Route files take their deps type from deps.ts.' }] },
      ],
    },
  },
  {
    files: ['src/cli/**', 'src/main.ts', 'bench/**', 'test/**'],
    rules: { 'no-console': 'off' },
  },
  {
    // Benchmarks write their results as Markdown: a table row is one line of text.
    files: ['bench/**'],
    rules: { 'max-len': ['error', { code: 160, ignoreStrings: true, ignoreTemplateLiterals: true }] },
  },
)

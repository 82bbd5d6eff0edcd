// ESLint flat config: typescript-eslint's recommended rules plus the project's conventions (type-only imports,
// no code compiled from strings, strict equality). Formatting is Prettier's (.prettierrc.json), so the rules that
// would fight it are off (eslint-config-prettier).
import js from '@eslint/js'
import prettier from 'eslint-config-prettier'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.kafka/', 'coverage/', 'bench/.peers/', 'native/*/build/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2022, sourceType: 'module' },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }
      ],
      'no-new-func': 'error',
      'no-eval': 'error',
      // `x != null` is the one loose comparison kept: it means "neither null nor undefined".
      eqeqeq: ['error', 'smart'],
      // `import('x').T` in a type position names a type without loading the module at run time.
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }
      ],
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }]
    }
  },
  {
    // A function longer than a screen holds more than one step of the story: split it. Tests are exempt (a test case
    // reads top to bottom), and blank lines and comments do not count.
    files: ['lib/**/*.ts', 'services/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true, IIFEs: true }] }
  },
  {
    // Data tables: each generator draws its vocabulary (hosts, daemons, messages) from one seeded generator in a fixed
    // order, so the tables stay in the function that draws them (split, the draw order and every golden output
    // change); the producer's metrics are one declaration per metric; the audit's Markdown page is its column headings
    // and one row of cells per topic.
    files: [
      'lib/generators/journald.ts',
      'lib/generators/zeek-dns.ts',
      'lib/generators/nginx-error.ts',
      'lib/generators/http.ts',
      'lib/generators/dnsmasq.ts',
      'lib/metrics/producer-metrics.ts',
      'lib/report/audit-markdown.ts'
    ],
    rules: { 'max-lines-per-function': 'off' }
  },
  {
    // XML escaping drops the control characters XML 1.0 cannot hold: a control-character class on purpose.
    files: ['lib/report/compare-svg.ts'],
    rules: { 'no-control-regex': 'off' }
  },
  {
    // The batch header's fields are typed on the class by merging it with an interface: one object assigned in the
    // constructor, no per-field copies on the read path.
    files: ['lib/protocol/record-batch-reader.ts'],
    rules: { '@typescript-eslint/no-unsafe-declaration-merging': 'off' }
  },
  {
    files: ['**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', __dirname: 'readonly' }
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' }
  },
  prettier
)

// `npm run lint` (`eslint --max-warnings 0 .`): the rules this house keeps (issue "One shape per
// thing", item 5). typescript-eslint's type-checked recommended set, plus the rules named below.
// A rule we disagree with is changed HERE, for the files it concerns, with a comment saying why; it
// is never silenced line by line (no eslint-disable comments anywhere). test/lint.e2e-spec.ts plants
// one violation of each rule this file insists on and checks that the lint catches it.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

/** Only src/provider speaks the provider's dialect: nothing else reads its wire shapes. */
const WIRE_TYPES = {
  group: ['**/provider/provider.types', '**/provider.types'],
  message: 'Only src/provider speaks the provider dialect: use the models of src/provider (provider.models.ts).',
};
/** A module reaches another module's data through that module's service, never its repository. */
const OTHER_MODULES_REPOSITORY = {
  regex: '^(\\.\\./)+.*\\.repository$',
  message: "Another module's repository: go through that module's service (export what you need from it).",
};
/** The application never depends on the test suite or the benchmarks. */
const TEST_OR_BENCH = {
  regex: '^(\\.\\./)+(test|bench)(/|$)',
  message: 'src/ must not import from test/ or bench/.',
};
/**
 * Repositories own their tables (DESIGN.md: the repository is the only code that calls Prisma/SQL on
 * its tables): PrismaService, and the VALUES of the generated Prisma client (PrismaClient, the
 * `Prisma` namespace's sql/raw/join, Decimal, its error classes), are imported only by
 * `*.repository.ts` files and the composition roots exempted below. TYPES from the generated client
 * (`import type { Transaction, Prisma } …`: row shapes, Prisma.TransactionClient passed through,
 * Prisma.InputJsonValue) stay open to services, DTOs and mappers: they name the domain's rows and
 * run no query. `generated/prisma/enums` is open too (plain constant objects, used by DTO validation).
 * Checked by typescript-eslint's variant of the rule, which tells `import type` apart.
 */
const DATABASE_ACCESS = [
  {
    group: ['**/database/prisma.service'],
    message: 'Only repositories (*.repository.ts) use PrismaService: move the query into this module’s repository.',
  },
  {
    group: ['**/generated/prisma/client', '**/generated/prisma/internal/*'],
    allowTypeImports: true,
    message:
      'Only repositories (*.repository.ts) use the Prisma client’s values (sql, raw, Decimal, errors); import types with `import type`.',
  },
];

/** The `no-restricted-imports` patterns of a folder (flat config replaces a rule's options, so each folder lists all it keeps). */
const restricted = (...patterns) => ['error', { patterns }];

/** The no-unsafe-* family (any flowing into typed code), turned off together where JSON is untyped by nature. */
const UNSAFE_ANY_OFF = {
  '@typescript-eslint/no-unsafe-argument': 'off',
  '@typescript-eslint/no-unsafe-assignment': 'off',
  '@typescript-eslint/no-unsafe-call': 'off',
  '@typescript-eslint/no-unsafe-member-access': 'off',
  '@typescript-eslint/no-unsafe-return': 'off',
  '@typescript-eslint/no-explicit-any': 'off',
};

export default defineConfig(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'src/generated/**',
      'coverage/**',
      'web/**',
      'tools/**',
      'docs/**',
      '**/*.js',
      '**/*.mjs',
      '**/*.cjs',
    ],
  },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        // tsconfig.json covers src, test, simulator, scripts and bench; prisma.config.ts (read by the
        // Prisma CLI) sits outside it and is checked with the default compiler options.
        projectService: { allowDefaultProject: ['prisma.config.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    plugins: { 'import-x': importX },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // A leading underscore marks a name kept on purpose (a callback's unused parameter, a field
      // left out of `{ field: _field, ...rest }`); the rule's default would force renames or deletes
      // that make those spots harder to read.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      'import-x/order': [
        'error',
        {
          groups: ['builtin', 'external', 'internal', 'parent', 'sibling', 'index'],
          alphabetize: { order: 'asc', caseInsensitive: true },
        },
      ],
      'import-x/no-duplicates': 'error',
    },
  },

  // Import boundaries (DESIGN.md: one Nest module per domain; only src/provider speaks the provider's dialect).
  {
    files: ['src/**/*.ts'],
    rules: { 'no-restricted-imports': restricted(WIRE_TYPES, OTHER_MODULES_REPOSITORY, TEST_OR_BENCH) },
  },
  {
    files: ['src/provider/**/*.ts'],
    rules: { 'no-restricted-imports': restricted(OTHER_MODULES_REPOSITORY, TEST_OR_BENCH) },
  },
  {
    // src/cli holds composition roots (like main.ts): a command wires repositories itself, without
    // booting the Nest application whose services would otherwise front them.
    files: ['src/cli/**/*.ts'],
    rules: { 'no-restricted-imports': restricted(WIRE_TYPES, TEST_OR_BENCH) },
  },

  {
    // Composition roots wire PrismaService themselves (src/database builds it; src/cli commands run
    // without the Nest application); unit specs may build rows with the client's values (Decimal).
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.repository.ts', 'src/database/**', 'src/cli/**', 'src/**/*.spec.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: DATABASE_ACCESS }] },
  },

  // Where the rules are changed, and why.
  {
    // Tests and the simulator handle JSON as it comes off the wire: supertest's `res.body`, the
    // simulator's Fastify request bodies and stored provider records are `any` by nature, and the
    // tests read them field by field on purpose (asserting the shape is the point). Typing every
    // body would only restate the assertions; the no-unsafe-* family (and `any` in their helpers)
    // stays on for the application in src/.
    files: ['test/**/*.ts', 'src/**/*.spec.ts', 'src/**/*.test.ts', 'simulator/**/*.ts'],
    rules: {
      ...UNSAFE_ANY_OFF,
      // Same cause: ids interpolated into test URLs come from those untyped bodies.
      '@typescript-eslint/restrict-template-expressions': 'off',
    },
  },
  {
    // The simulator reads fields of those untyped bodies with `String(field ?? default)`: a field
    // sent as an object reads as "[object Object]" and is refused like any other bad value, as the
    // provider would.
    files: ['simulator/**/*.ts'],
    rules: { '@typescript-eslint/no-base-to-string': 'off' },
  },
  {
    // The simulator's Fastify handlers are `async` without awaiting: Fastify sends what an async
    // handler resolves to, whereas a plain handler must call `reply.send` itself (returning
    // `undefined` from one leaves the request hanging). Dropping `async` would change behaviour.
    files: ['simulator/**/*.ts'],
    rules: { '@typescript-eslint/require-await': 'off' },
  },
  {
    // The module's purpose is to find NUL (and lone surrogates), which PostgreSQL's text and jsonb
    // refuse: the control character in the pattern is deliberate.
    files: ['src/common/storable-text.ts'],
    rules: { 'no-control-regex': 'off' },
  },
  {
    // nestjs-pino does not export its request store, so it is loaded by file path with require()
    // (an import cannot take a computed path synchronously); see the comment at the call.
    files: ['src/logging.ts'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Test doubles stand in for async interfaces (a webhook handler, a poller's probe): they stay
    // `async` without awaiting so that a throw inside them is a rejected promise, as the real ones give.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/require-await': 'off' },
  },
  {
    // `ledgerLines` is an async generator on purpose: Readable.from pulls it one COPY batch at a time
    // through the async iterator protocol; a plain generator would be read synchronously.
    files: ['bench/finance.bench.ts'],
    rules: { '@typescript-eslint/require-await': 'off' },
  },
  {
    // A real dynamic import() for an ESM-only package: TypeScript and SWC compile `import()` to
    // `require()` under CommonJS, so the import is built with the Function constructor (see the
    // comment at `importEsm`).
    files: ['scripts/lib/embedded-db.ts'],
    rules: { '@typescript-eslint/no-implied-eval': 'off' },
  },
);

import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ESLint } from 'eslint';

/**
 * `npm run lint` keeps the house rules (eslint.config.mjs): each rule below is proved to fire by
 * planting one small violation of it in a temporary folder inside src/ (inside tsconfig.json, so
 * the type-aware rules see it as application code) and linting that folder with the ESLint Node API
 * and the repository's own config. A clean planted file proves the folder itself raises nothing.
 * ESLint runs in a child Node process: it loads its config and plugins with import(), which Jest's
 * module sandbox refuses (no --experimental-vm-modules).
 */
const ROOT = path.join(__dirname, '..');
const FOLDER = path.join(ROOT, 'src', `lint-planted-${process.pid}`);

/** file name → [source, the rule id that must fire, a part of its message (import boundaries share one rule)]. */
const PLANTED: Record<string, [source: string, ruleId: string, message?: string]> = {
  'floating-promise.ts': [
    `async function later(): Promise<number> {\n  return await Promise.resolve(1);\n}\n\nexport function start(): void {\n  later();\n}\n`,
    '@typescript-eslint/no-floating-promises',
  ],
  'misused-promise.ts': [
    `export function check(ready: Promise<boolean>): number {\n  if (ready) return 1;\n  return 0;\n}\n`,
    '@typescript-eslint/no-misused-promises',
  ],
  'await-thenable.ts': [
    `export async function total(): Promise<number> {\n  const n = 42;\n  return await n;\n}\n`,
    '@typescript-eslint/await-thenable',
  ],
  'switch-exhaustive.ts': [
    `type Side = 'credit' | 'debit';\n\nexport function sign(side: Side): number {\n  switch (side) {\n    case 'credit':\n      return 1;\n  }\n  return 0;\n}\n`,
    '@typescript-eslint/switch-exhaustiveness-check',
  ],
  'type-imports.ts': [
    `import { FieldError } from '../common/errors';\n\nexport const fields: FieldError[] = [];\n`,
    '@typescript-eslint/consistent-type-imports',
  ],
  'unsafe-any.ts': [
    `export function amountOf(body: string): number {\n  const parsed = JSON.parse(body);\n  return parsed.amount;\n}\n`,
    '@typescript-eslint/no-unsafe-member-access',
  ],
  'import-order.ts': [
    `import { ErrorCode } from '../common/errors';\nimport fs from 'node:fs';\n\nexport const both = [fs.existsSync, ErrorCode.NotFound];\n`,
    'import-x/order',
  ],
  'duplicate-import.ts': [
    `import { ErrorCode } from '../common/errors';\nimport { DomainError } from '../common/errors';\n\nexport const both = [ErrorCode.NotFound, DomainError];\n`,
    'import-x/no-duplicates',
  ],
  'wire-types.ts': [
    `import type { WireEnvelope } from '../provider/provider.types';\n\nexport type Answer = WireEnvelope<string>;\n`,
    'no-restricted-imports',
    'Only src/provider speaks the provider dialect',
  ],
  'is-optional.ts': [
    `import { IsOptional, IsString } from 'class-validator';\n\nexport class Body {\n  @IsOptional()\n  @IsString()\n  note?: string;\n}\n`,
    'no-restricted-imports',
    'IsOptional lets null through',
  ],
  'other-repository.ts': [
    `import { OutboxRepository } from '../outbound/outbox.repository';\n\nexport const repository = OutboxRepository;\n`,
    'no-restricted-imports',
    "Another module's repository",
  ],
  'imports-test.ts': [
    `import { SIMULATOR_API_KEY } from '../../test/support/harness';\n\nexport const key = SIMULATOR_API_KEY;\n`,
    'no-restricted-imports',
    'src/ must not import from test/ or bench/',
  ],
  'prisma-service.ts': [
    `import { PrismaService } from '../database/prisma.service';\n\nexport const service = PrismaService;\n`,
    '@typescript-eslint/no-restricted-imports',
    'Only repositories (*.repository.ts) use PrismaService',
  ],
  'prisma-client-value.ts': [
    `import { Prisma } from '../generated/prisma/client';\n\nexport const ping = Prisma.sql\`SELECT 1\`;\n`,
    '@typescript-eslint/no-restricted-imports',
    'Only repositories (*.repository.ts) use the Prisma client’s values',
  ],
  // Allowed: a repository uses PrismaService and the client's values; anything may import the client's types.
  'planted.repository.ts': [
    `import { PrismaService } from '../database/prisma.service';\nimport { Prisma } from '../generated/prisma/client';\n\nexport const parts = [PrismaService, Prisma.sql\`SELECT 1\`];\n`,
    '',
  ],
  'client-types.ts': [
    `import type { Prisma, Transaction } from '../generated/prisma/client';\n\nexport type Row = Transaction;\nexport type Json = Prisma.InputJsonValue;\n`,
    '',
  ],
  'clean.ts': [
    `import { type FieldError, ErrorCode } from '../common/errors';\n\nexport const fields: FieldError[] = [];\nexport const code = ErrorCode.NotFound;\n`,
    '',
  ],
};

/** Lints the folder in argv[2] with the config of the repository in argv[1]; prints the results as JSON. */
const LINT_FOLDER = `
const { ESLint } = require('eslint');
const [cwd, folder] = process.argv.slice(1);
new ESLint({ cwd }).lintFiles([folder]).then(
  (results) => process.stdout.write(JSON.stringify(results)),
  (error) => { console.error(error); process.exit(1); },
);`;

describe('lint: each house rule catches a planted violation', () => {
  let results: Map<string, ESLint.LintResult>;

  beforeAll(async () => {
    fs.mkdirSync(FOLDER, { recursive: true });
    for (const [name, [source]] of Object.entries(PLANTED)) fs.writeFileSync(path.join(FOLDER, name), source);
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', LINT_FOLDER, ROOT, FOLDER], {
      cwd: ROOT,
      maxBuffer: 16 * 1024 * 1024,
    });
    const linted = JSON.parse(stdout) as ESLint.LintResult[];
    results = new Map(linted.map((r) => [path.basename(r.filePath), r]));
  }, 60_000);

  afterAll(() => fs.rmSync(FOLDER, { recursive: true, force: true }));

  it('lints every planted file', () => {
    expect([...results.keys()].sort()).toEqual(Object.keys(PLANTED).sort());
  });

  const expectations = Object.entries(PLANTED)
    .filter(([, [, ruleId]]) => ruleId !== '')
    .map(([name, [, ruleId, message]]) => [name, ruleId, message ?? ''] as const);

  it.each(expectations)('%s: %s fires', (name, ruleId, message) => {
    const messages = results.get(name)!.messages;
    // A parse error (no rule id) would mean the file was not linted as planted.
    expect(messages.filter((m) => m.ruleId === null)).toEqual([]);
    const fired = messages.filter((m) => m.ruleId === ruleId && m.message.includes(message));
    expect(fired).not.toHaveLength(0);
    expect(fired.every((m) => m.severity === 2)).toBe(true);
  });

  it('a file keeping the rules raises nothing', () => {
    expect(results.get('clean.ts')!.messages).toEqual([]);
  });

  it('a repository may use PrismaService and the client values; any file may import the client types', () => {
    expect(results.get('planted.repository.ts')!.messages).toEqual([]);
    expect(results.get('client-types.ts')!.messages).toEqual([]);
  });
});

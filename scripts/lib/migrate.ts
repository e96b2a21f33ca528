import { spawnSync } from 'node:child_process';
import path from 'node:path';

/**
 * Applies prisma/migrations to `databaseUrl` (creating the database if missing) with the Prisma
 * CLI and the offline schema engine (prisma.config.ts). Dev and test tooling only: the gateway
 * itself never runs the CLI.
 * @throws Error with the CLI's output when it fails or does not report success.
 */
export function migrateDatabase(databaseUrl: string): void {
  const cli = path.join(process.cwd(), 'node_modules', 'prisma', 'build', 'index.js');
  const result = spawnSync(process.execPath, [cli, 'migrate', 'deploy'], {
    env: { ...process.env, DATABASE_URL: databaseUrl },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = `${result.stdout}\n${result.stderr}`;
  // The CLI can exit 0 without applying anything if the engine dies (docs/operations.md#database-and-migrations): check the text.
  if (result.status !== 0 || !/(applied|No pending migrations)/i.test(output)) {
    throw new Error(`prisma migrate deploy failed (exit ${result.status}):\n${output}`);
  }
}

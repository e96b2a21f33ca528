/**
 * `npm run sdk [-- <dir>]`: generates the TypeScript client of the gateway from openapi.json with
 * @hey-api/openapi-ts (pinned in package.json) into clients/typescript/src, or into `<dir>` (CI
 * generates into a temporary folder and compares, test/sdk-client.spec.ts). The output is a fetch
 * client with no runtime dependency: types (types.gen.ts), one function per operation named from its
 * operationId (sdk.gen.ts), the schemas as consts (schemas.gen.ts: what TypeScript's types cannot say,
 * such as an amount's `type: integer` and bounds) and the client core (client/, core/). Deterministic:
 * the same openapi.json and generator version give the same bytes. docs/api.md "Typed client".
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.join(__dirname, '..');
/** Where `npm run sdk` writes the generated sources (everything under it is generated). */
export const SDK_OUTPUT = path.join(ROOT, 'clients', 'typescript', 'src');

const output = path.resolve(process.argv[2] ?? SDK_OUTPUT);
const result = spawnSync(
  'openapi-ts',
  [
    '--input',
    path.join(ROOT, 'openapi.json'),
    '--output',
    output,
    '--client',
    '@hey-api/client-fetch',
    '--plugins',
    '@hey-api/typescript',
    '@hey-api/sdk',
    // schemas.gen.ts: each schema as a const, so a caller can read what TypeScript's `number` cannot
    // say (an amount's `type: integer`, `format: int64` and bounds) and check values at run time.
    '@hey-api/schemas',
    '--no-log-file',
    '--silent',
  ],
  { stdio: 'inherit', cwd: ROOT },
);
if (result.error) throw result.error;
if (result.status !== 0) process.exit(result.status ?? 1);
process.stdout.write(`client written to ${path.relative(ROOT, output) || '.'}\n`);

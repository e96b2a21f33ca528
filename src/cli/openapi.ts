/**
 * `npm run openapi`: writes the OpenAPI document to openapi.json (a test fails when they drift).
 * Runs compiled (node dist/cli/openapi.js): Nest needs the decorator metadata that tsc emits and tsx does not.
 */
import 'reflect-metadata';
import fs from 'node:fs';
import { renderOpenApi } from '../openapi';

renderOpenApi()
  .then((text) => {
    fs.writeFileSync('openapi.json', text);
    process.stdout.write(`openapi.json written (${text.length} bytes)\n`);
    process.exit(0);
  })
  .catch((error) => {
    process.stderr.write(`${(error as Error).stack}\n`);
    process.exit(1);
  });

/**
 * The API description and the typed client generated from it (docs/api.md "Typed client"):
 * - openapi.json is correct for generators: every `$ref` resolves, every error answer is
 *   `application/problem+json` with a problem schema, public routes state `security: []`, every
 *   operation has a tag, a summary and a readable operationId; Redocly's recommended ruleset
 *   (redocly.yaml) finds no error;
 * - clients/typescript/src is what `npm run sdk` generates from the committed openapi.json (generated
 *   again into a temporary folder and compared file by file), and compiles under `--strict`.
 * openapi.json itself is checked against the code by test/platform.e2e-spec.ts.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.join(__dirname, '..');
const CLIENT_SRC = path.join(ROOT, 'clients', 'typescript', 'src');
const doc = JSON.parse(fs.readFileSync(path.join(ROOT, 'openapi.json'), 'utf8'));
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const operations: Array<{ method: string; path: string; op: any }> = Object.entries(doc.paths).flatMap(
  ([p, item]: [string, any]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ method: method.toUpperCase(), path: p, op: item[method] })),
);

/** Runs an npm script (its node_modules/.bin on PATH), failing with its output. */
function npm(args: string[]): string {
  const result = spawnSync('npm', args, { cwd: ROOT, encoding: 'utf8', env: { ...process.env, FORCE_COLOR: '0' } });
  const output = `${result.stdout}${result.stderr}`;
  if (result.status !== 0) throw new Error(`npm ${args.join(' ')} failed (${result.status}):\n${output}`);
  return output;
}

/** Every file under `dir`, relative, sorted. */
function files(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}

describe('openapi.json and the typed client', () => {
  it(`has ${operations.length} operations, each with a tag, a summary and a stable readable operationId`, () => {
    expect(operations.length).toBeGreaterThan(40);
    const bad = operations.filter(
      ({ op }) => !op.tags?.length || !op.summary || !/^[a-z][A-Za-z0-9]*_[a-z][A-Za-z0-9]*$/.test(op.operationId),
    );
    expect(bad.map(({ method, path: p, op }) => `${method} ${p} ${op.operationId}`)).toEqual([]);
    expect(operations.find(({ path: p, method }) => method === 'POST' && p === '/v1/payouts')?.op.operationId).toBe(
      'payouts_create',
    );
    const ids = operations.map(({ op }) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('resolves every $ref to a schema of components', () => {
    const refs = new Set<string>();
    const visit = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(visit);
      else if (node && typeof node === 'object') {
        for (const [key, value] of Object.entries(node)) {
          if (key === '$ref' && typeof value === 'string') refs.add(value);
          else visit(value);
        }
      }
    };
    visit(doc);
    const unresolved = [...refs].filter((ref) => {
      const match = /^#\/components\/schemas\/(.+)$/.exec(ref);
      return !match || !doc.components.schemas[match[1]];
    });
    expect(unresolved).toEqual([]);
    expect(refs).toContain('#/components/schemas/DestinationFieldDto');
  });

  it('declares every error answer as application/problem+json with a problem schema', () => {
    const problems = new Set(['#/components/schemas/ProblemDto', '#/components/schemas/UnsettledProblemDto']);
    const bad: string[] = [];
    for (const { method, path: p, op } of operations) {
      for (const [status, response] of Object.entries<any>(op.responses)) {
        if (Number(status) < 400) continue;
        const types = Object.keys(response.content ?? {});
        const ref = response.content?.['application/problem+json']?.schema?.$ref;
        if (types.join() !== 'application/problem+json' || !problems.has(ref)) {
          bad.push(`${method} ${p} ${status}: ${types.join() || 'no content'} ${ref ?? ''}`);
        }
      }
    }
    expect(bad).toEqual([]);
  });

  it('states the security of every operation: bearer for the API, none for public routes', () => {
    const security = Object.fromEntries(operations.map(({ method, path: p, op }) => [`${method} ${p}`, op.security]));
    expect(security['POST /v1/payouts']).toEqual([{ bearer: [] }]);
    for (const publicRoute of ['GET /health/live', 'GET /health/ready', 'GET /metrics', 'POST /webhooks/provider']) {
      expect([publicRoute, security[publicRoute]]).toEqual([publicRoute, []]);
    }
    expect(Object.entries(security).filter(([, s]) => !Array.isArray(s))).toEqual([]);
  });

  it("passes Redocly's recommended ruleset with no error (npm run lint:openapi)", () => {
    expect(npm(['run', '--silent', 'lint:openapi'])).toMatch(/valid/i);
  });

  it('keeps clients/typescript/src identical to what `npm run sdk` generates from openapi.json', () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'wallet-gateway-sdk-'));
    try {
      npm(['run', '--silent', 'sdk', '--', out]);
      expect(files(CLIENT_SRC)).toEqual(files(out));
      const differing = files(out).filter(
        (file) =>
          fs.readFileSync(path.join(out, file), 'utf8') !== fs.readFileSync(path.join(CLIENT_SRC, file), 'utf8'),
      );
      expect({ differing, hint: 'run `npm run sdk` and commit clients/typescript/src' }).toEqual({
        differing: [],
        hint: expect.any(String),
      });
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });

  it('compiles the client with tsc --strict (clients/typescript/tsconfig.json)', () => {
    const tsconfig = JSON.parse(fs.readFileSync(path.join(ROOT, 'clients', 'typescript', 'tsconfig.json'), 'utf8'));
    expect(tsconfig.compilerOptions.strict).toBe(true);
    npm(['exec', '--', 'tsc', '-p', 'clients/typescript', '--noEmit']);
  });
});

import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { isISO31661Alpha2 } from 'class-validator';
import { FetchingJSONSchemaStore, InputData, JSONSchemaInput, quicktype } from 'quicktype-core';
import { CountryCodes } from 'validator/lib/isISO31661Alpha2';
import { UUID_PATTERN } from '../src/common/openapi-validators';

/**
 * openapi.json is as strict as the server, in ways a client generator sees (issue 37):
 * - the mobile apps' languages: the request and answer types generated from the document's schemas
 *   by quicktype in Kotlin and Swift type no money field (nor any field) as a floating-point number;
 * - redocly.yaml's own rules fail the lint on a planted float, an unbounded money integer and an id
 *   that is not a UUID (and pass on the committed document: `npm run lint:openapi`);
 * - every request body schema is closed and every `{id}` path parameter is a UUID.
 */
const ROOT = path.join(__dirname, '..');
type Json = Record<string, any>;
const readDoc = (): Json => JSON.parse(fs.readFileSync(path.join(ROOT, 'openapi.json'), 'utf8')) as Json;

/** Money field names (as redocly.yaml's rules): amount, fee, balance, …Amount, …Fee, …Balance, …Minor. */
const MONEY = /^(amount|fee|balance|[a-z][A-Za-z0-9]*(Amount|Fee|Balance|Minor))$/;

/**
 * The component schemas of an OpenAPI 3.0 document as one JSON Schema (draft-07) whose root has
 * one property per schema, so that quicktype generates every type: `$ref`s re-pointed to
 * `definitions`, and OpenAPI's `nullable: true` written as a `null` alternative.
 */
function toJsonSchema(doc: Json): Json {
  const convert = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(convert);
    if (node === null || typeof node !== 'object') return node;
    const out: Json = {};
    for (const [key, value] of Object.entries(node as Json)) {
      if (key === 'nullable' || key === 'example') continue;
      out[key] =
        key === '$ref' && typeof value === 'string'
          ? value.replace('#/components/schemas/', '#/definitions/')
          : convert(value);
    }
    if ((node as Json).nullable === true) return { anyOf: [out, { type: 'null' }] };
    return out;
  };
  const schemas = doc.components.schemas as Json;
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    definitions: convert(schemas),
    type: 'object',
    properties: Object.fromEntries(Object.keys(schemas).map((name) => [name, { $ref: `#/definitions/${name}` }])),
  };
}

/** Source text of the types quicktype generates for `doc`'s schemas in `lang` (types only, no (de)serialiser). */
async function generate(doc: Json, lang: 'kotlin' | 'swift'): Promise<string> {
  const input = new JSONSchemaInput(new FetchingJSONSchemaStore());
  await input.addSource({ name: 'GatewaySchemas', schema: JSON.stringify(toJsonSchema(doc)) });
  const inputData = new InputData();
  inputData.addInput(input);
  const result = await quicktype({
    inputData,
    lang,
    rendererOptions: { 'just-types': true },
  });
  return result.lines.join('\n');
}

/** `[type, field, its type]` of every field of every generated class/struct (`val x: T` / `let x: T`). */
function fieldsOf(source: string, lang: 'kotlin' | 'swift'): Array<[string, string, string]> {
  const fields: Array<[string, string, string]> = [];
  let owner = '';
  for (const line of source.split('\n')) {
    const type = /^(?:data class|class|struct|enum|sealed class)\s+(\w+)/.exec(line.trim());
    if (type) owner = type[1];
    const field = (lang === 'kotlin' ? /^\s*val (\w+)\s*:\s*([\w<>?, ]+)/ : /^\s*let (\w+)\s*:\s*([\w<>?[\], ]+)/).exec(
      line,
    );
    if (field) fields.push([owner, field[1], field[2].trim().replace(/,$/, '')]);
  }
  return fields;
}

/** The fields whose type is a floating-point one in `lang` (Kotlin Double/Float, Swift Double/Float). */
const floats = (fields: Array<[string, string, string]>) =>
  fields.filter(([, , type]) => /\b(Double|Float)\b/.test(type));

describe('openapi.json in the mobile apps languages (quicktype)', () => {
  for (const lang of ['kotlin', 'swift'] as const) {
    it(`${lang}: no money field, and no field at all, is a floating-point type`, async () => {
      const fields = fieldsOf(await generate(readDoc(), lang), lang);
      const money = fields.filter(([, name]) => MONEY.test(name));
      // The check sees the amounts: they are generated, as 64-bit integers (or an integer-or-string choice).
      expect(money.length).toBeGreaterThan(20);
      const payoutAmount = fields.find(([owner, name]) => owner === 'CreatePayoutDto' && name === 'amount');
      expect(payoutAmount?.[2]).toBe(lang === 'kotlin' ? 'Long' : 'Int');
      expect(floats(money)).toEqual([]);
      expect(floats(fields)).toEqual([]);
    }, 60_000);

    it(`${lang}: a money field described as a number would be caught`, async () => {
      const doc = readDoc();
      doc.components.schemas.PayoutDto.properties.fee = { type: 'number' };
      const caught = floats(fieldsOf(await generate(doc, lang), lang));
      expect(caught).toContainEqual(['PayoutDto', 'fee', expect.stringMatching(/Double/)]);
    }, 60_000);
  }
});

/** Runs the repository's redocly lint (redocly.yaml) on `file`; its problems, by rule id and pointer. */
async function redoclyLint(
  file: string,
): Promise<{ ok: boolean; problems: Array<{ ruleId: string; pointer: string }> }> {
  const bin = path.join(ROOT, 'node_modules', '.bin', 'redocly');
  const args = ['lint', file, '--config', path.join(ROOT, 'redocly.yaml'), '--format=json'];
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
  let stdout: string;
  let ok = true;
  try {
    ({ stdout } = await promisify(execFile)(bin, args, { cwd: ROOT, env, maxBuffer: 64 * 1024 * 1024 }));
  } catch (error) {
    ok = false;
    stdout = (error as { stdout: string }).stdout;
  }
  const report = JSON.parse(stdout) as {
    problems: Array<{ ruleId: string; severity: string; location: Array<{ pointer: string }> }>;
  };
  return {
    ok,
    problems: report.problems
      .filter((problem) => problem.severity === 'error')
      .map((problem) => ({ ruleId: problem.ruleId, pointer: problem.location[0]?.pointer ?? '' })),
  };
}

describe('redocly.yaml: our own rules', () => {
  let folder: string;
  beforeAll(() => {
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'openapi-rules-'));
  });
  afterAll(() => fs.rmSync(folder, { recursive: true, force: true }));

  it('the committed openapi.json has no error', async () => {
    const result = await redoclyLint(path.join(ROOT, 'openapi.json'));
    expect(result.problems).toEqual([]);
    expect(result.ok).toBe(true);
  }, 60_000);

  it('fails on a float, an unbounded money integer, and an id that is not a UUID', async () => {
    const doc = readDoc();
    const schemas = doc.components.schemas as Json;
    schemas.PayoutDto.properties.fee = { type: 'number' };
    schemas.CollectionDto.properties.amount = { type: 'integer', minimum: 0 };
    schemas.TransactionDto.properties.amount.oneOf[0] = { type: 'integer' };
    schemas.CreatePayoutDto.properties.beneficiaryId = { type: 'string' };
    schemas.PayoutDto.properties.customerId = { type: 'string', format: 'email' };
    const getPayout = doc.paths['/v1/payouts/{id}'].get;
    getPayout.parameters.find((parameter: Json) => parameter.name === 'id').schema = { type: 'string' };
    const listTransactions = doc.paths['/v1/transactions'].get;
    listTransactions.parameters.find((parameter: Json) => parameter.name === 'amountMin').schema = { type: 'integer' };
    // The provider's ids are not UUIDs: no rule asks them to be.
    schemas.PayoutDto.properties.providerId = { type: 'string' };
    const file = path.join(folder, 'planted.json');
    fs.writeFileSync(file, JSON.stringify(doc, null, 2));

    const result = await redoclyLint(file);
    expect(result.ok).toBe(false);
    const found = (ruleId: string, pointer: string) =>
      result.problems.some((problem) => problem.ruleId === ruleId && problem.pointer.startsWith(pointer));
    const expected: Array<[string, string]> = [
      ['rule/money-not-a-float', '#/components/schemas/PayoutDto/properties/fee'],
      ['rule/no-float', '#/components/schemas/PayoutDto/properties/fee'],
      ['rule/money-bounded', '#/components/schemas/CollectionDto/properties/amount'],
      ['rule/choice-integer-bounded', '#/components/schemas/TransactionDto/properties/amount/oneOf/0'],
      ['rule/id-is-uuid', '#/components/schemas/CreatePayoutDto/properties/beneficiaryId'],
      ['rule/id-format-is-uuid', '#/components/schemas/PayoutDto/properties/customerId'],
      ['rule/id-parameter-is-uuid', '#/paths/~1v1~1payouts~1{id}/get/parameters/0/schema'],
      ['rule/money-parameter-bounded', '#/paths/~1v1~1transactions/get/parameters/'],
    ];
    expect(expected.filter(([ruleId, pointer]) => !found(ruleId, pointer))).toEqual([]);
    expect(result.problems.filter((problem) => problem.pointer.includes('providerId'))).toEqual([]);
  }, 60_000);
});

describe('openapi.json states what the server enforces', () => {
  const doc = readDoc();
  const operations = Object.entries(doc.paths as Json).flatMap(([route, item]) =>
    Object.entries(item as Json).map(([method, operation]) => ({ route, method, operation: operation as Json })),
  );

  it('every request body schema is closed (additionalProperties: false)', () => {
    const open = operations.flatMap(({ route, method, operation }) => {
      const ref = operation.requestBody?.content?.['application/json']?.schema?.$ref as string | undefined;
      if (!ref) return [];
      const schema = doc.components.schemas[ref.split('/').pop()!];
      return schema.additionalProperties === false ? [] : [`${method} ${route}`];
    });
    expect(open).toEqual([]);
  });

  it('a country is one of the codes the server accepts, all of them', () => {
    const parameter = (doc.paths['/v1/payout-countries/{country}'].get.parameters as Json[]).find(
      (item) => item.name === 'country',
    );
    const accepted = [...CountryCodes].filter((code) => isISO31661Alpha2(code)).sort();
    expect(parameter?.schema.enum).toEqual(accepted);
    expect(doc.components.schemas.CreateBeneficiaryDto.properties.country.enum).toEqual(accepted);
  });

  it('every {id} path parameter is a UUID, and the Idempotency-Key header states its rules', () => {
    for (const { operation } of operations) {
      for (const parameter of (operation.parameters ?? []) as Json[]) {
        if (parameter.in === 'path' && /^(id|\w+Id)$/.test(parameter.name))
          expect(parameter.schema).toEqual({ type: 'string', format: 'uuid', pattern: UUID_PATTERN });
        if (parameter.in === 'header' && parameter.name === 'Idempotency-Key')
          expect(parameter.schema).toEqual({
            type: 'string',
            minLength: 1,
            maxLength: 255,
            pattern: '^[\\x21-\\x7e]{1,255}$',
          });
      }
    }
  });
});

import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { generateSync } from 'json-schema-faker';

/**
 * openapi.json (OpenAPI 3.0) as a test oracle, for test/contract-property.e2e-spec.ts:
 * - `operations()`: every path × method, with its parameters, request body and responses;
 * - `validRequest()`: path, query, header and body values generated from the description by
 *   json-schema-faker (seeded, so a case is reproducible from its seed), each checked against the
 *   description before it is sent;
 * - `mutations()`: the ways to make one described input invalid, one thing at a time (a wrong type,
 *   a value out of bounds, outside its enum, pattern or format, an unknown property, an explicit
 *   null, a missing required field or header, a body that is not an object);
 * - `requestProblems()`: what the description says is wrong with a request (nothing for a valid one);
 * - `responseProblems()`: what is wrong with an answer (a status or media type the operation does
 *   not declare, a body that does not match the declared schema).
 * Schemas are read with `$ref` inlined, single-element `allOf` merged into their parent, and
 * OpenAPI 3.0's `nullable` turned into JSON Schema (`anyOf` with `null`) before Ajv or the faker
 * sees them.
 */

/** A JSON Schema object as found in openapi.json. */
export type Schema = Record<string, any>;

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Schema;
}

export interface Operation {
  id: string;
  method: string;
  path: string;
  parameters: Parameter[];
  body?: { schema: Schema; required: boolean };
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

/** One HTTP request, as parts: values are typed as the description says (a query integer is a number). */
export interface RequestParts {
  path: Record<string, string>;
  query: Record<string, unknown>;
  headers: Record<string, string>;
  /** Absent: no body is sent. */
  body?: unknown;
}

/** One way to make a valid request invalid. */
export interface Mutation {
  where: 'body' | 'query' | 'path' | 'header';
  /** Dotted path of the field (`payer.type`), the parameter or header name; '' for the body itself. */
  field: string;
  what: string;
  apply(req: RequestParts): RequestParts;
}

const SEP = '.';
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

export class Contract {
  private readonly ajv: Ajv;
  /** Parameters arrive as text: this one coerces them to the described type before checking. */
  private readonly ajvParams: Ajv;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(readonly doc: any) {
    this.ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
    this.ajvParams = addFormats(new Ajv({ strict: false, allErrors: true, coerceTypes: true }));
  }

  /** Every operation of the description, in document order. */
  operations(): Operation[] {
    const out: Operation[] = [];
    for (const [route, item] of Object.entries(this.doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(item)) {
        if (!METHODS.includes(method)) continue;
        const json = op.requestBody?.content?.['application/json'];
        out.push({
          id: op.operationId ?? `${method} ${route}`,
          method,
          path: route,
          parameters: [...(item.parameters ?? []), ...(op.parameters ?? [])],
          body: json
            ? { schema: this.schema(json.schema ?? {}), required: op.requestBody.required === true }
            : undefined,
          responses: op.responses ?? {},
        });
      }
    }
    return out;
  }

  /** The methods the description declares for a path. */
  methods(route: string): string[] {
    return Object.keys(this.doc.paths[route] ?? {}).filter((m) => METHODS.includes(m));
  }

  /**
   * `schema` with every `$ref` inlined, `allOf: [one]` merged into its parent and `example`
   * dropped; `nullable` is kept (see `jsonSchema`).
   */
  schema(schema: Schema, stack: string[] = []): Schema {
    if (schema === null || typeof schema !== 'object') return schema;
    if (typeof schema.$ref === 'string') {
      const name = schema.$ref.replace('#/components/schemas/', '');
      if (stack.includes(name)) throw new Error(`recursive schema ${[...stack, name].join(' → ')}`);
      const target = this.doc.components?.schemas?.[name];
      if (!target) throw new Error(`unresolved $ref ${schema.$ref}`);
      const { $ref: _ref, ...siblings } = schema;
      return { ...this.schema(target, [...stack, name]), ...this.schema(siblings, stack) };
    }
    const out: Schema = {};
    for (const [key, value] of Object.entries(schema)) {
      if (key === 'example' || key === 'examples') continue;
      if (key === 'properties') {
        out.properties = Object.fromEntries(
          Object.entries(value as Record<string, Schema>).map(([k, v]) => [k, this.schema(v, stack)]),
        );
      } else if (key === 'items' || key === 'additionalProperties' || key === 'not') {
        out[key] = typeof value === 'object' ? this.schema(value, stack) : value;
      } else if (key === 'allOf' || key === 'anyOf' || key === 'oneOf') {
        out[key] = (value as Schema[]).map((v) => this.schema(v, stack));
      } else out[key] = value;
    }
    if (Array.isArray(out.allOf) && out.allOf.length === 1) {
      const [only] = out.allOf;
      delete out.allOf;
      return { ...only, ...out };
    }
    return out;
  }

  /** A normalized schema as plain JSON Schema: OpenAPI 3.0 `nullable: true` becomes `anyOf` with null. */
  jsonSchema(schema: Schema): Schema {
    if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema;
    const out: Schema = {};
    for (const [key, value] of Object.entries(schema)) {
      if (key === 'nullable') continue;
      if (key === 'properties') {
        out.properties = Object.fromEntries(
          Object.entries(value as Record<string, Schema>).map(([k, v]) => [k, this.jsonSchema(v)]),
        );
      } else if (key === 'items' || key === 'additionalProperties' || key === 'not') {
        out[key] = typeof value === 'object' ? this.jsonSchema(value) : value;
      } else if (key === 'allOf' || key === 'anyOf' || key === 'oneOf') {
        out[key] = (value as Schema[]).map((v) => this.jsonSchema(v));
      } else out[key] = value;
    }
    if (schema.nullable === true) {
      return { anyOf: [{ type: 'null' }, out] };
    }
    return out;
  }

  private validator(key: string, schema: Schema, params = false): ValidateFunction {
    let fn = this.compiled.get(key);
    if (!fn) {
      fn = (params ? this.ajvParams : this.ajv).compile(this.jsonSchema(this.schema(schema)));
      this.compiled.set(key, fn);
    }
    return fn;
  }

  /** Errors of `value` against `schema` (none: valid). */
  check(key: string, schema: Schema, value: unknown, params = false): string[] {
    const fn = this.validator(key, schema, params);
    // Parameters are checked on a copy: coercion rewrites the value in place.
    const subject = params ? { v: structuredClone(value) } : value;
    const ok = params ? fn(subject) : fn(value);
    if (ok) return [];
    return (fn.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword}`);
  }

  /** What the description says is wrong with `req` for `op` (empty: a valid request). */
  requestProblems(op: Operation, req: RequestParts): string[] {
    const problems: string[] = [];
    for (const p of op.parameters) {
      const bag = p.in === 'path' ? req.path : p.in === 'query' ? req.query : p.in === 'header' ? req.headers : {};
      const value = p.in === 'header' ? headerValue(req.headers, p.name) : bag[p.name];
      if (value === undefined) {
        if (p.required) problems.push(`${p.in} ${p.name}: required`);
        continue;
      }
      const schema = { type: 'object', properties: { v: p.schema ?? {} } };
      problems.push(
        ...this.check(`param ${op.id} ${p.in} ${p.name}`, schema, value, true).map((e) => `${p.in} ${p.name}: ${e}`),
      );
    }
    if (op.body) {
      if (req.body === undefined) {
        if (op.body.required) problems.push('body: required');
      } else problems.push(...this.check(`body ${op.id}`, op.body.schema, req.body).map((e) => `body: ${e}`));
    }
    return problems;
  }

  /**
   * A request for `op` that the description calls valid, generated from `seed`. `optionals`:
   * the probability of each optional property, parameter or header (1: all of them).
   * `pick` may replace a generated value (a real id instead of a random UUID); the result must
   * still be valid, or this throws.
   */
  validRequest(
    op: Operation,
    seed: number,
    optionals: number,
    pick: (where: 'path' | 'query' | 'header' | 'body', field: string, generated: unknown) => unknown = (_w, _f, g) =>
      g,
  ): RequestParts {
    let problems: string[] = [];
    for (let attempt = 0; attempt < 20; attempt++) {
      const s = seed + attempt * 7919;
      const req: RequestParts = { path: {}, query: {}, headers: {} };
      const params = op.parameters.filter(
        (p): p is Parameter & { in: 'path' | 'query' | 'header' } => p.in !== 'cookie',
      );
      params.forEach((p, i) => {
        const chance = ((s + i * 104729) % 1000) / 1000;
        if (!p.required && chance >= optionals) return;
        const value = pick(p.in, p.name, this.sample(p.schema ?? { type: 'string' }, s + i + 1, optionals));
        if (value === undefined) return;
        if (p.in === 'path') req.path[p.name] = text(value);
        else if (p.in === 'query') req.query[p.name] = value;
        else if (p.in === 'header') req.headers[p.name] = text(value);
      });
      if (op.body && (op.body.required || ((s >> 3) % 1000) / 1000 < optionals)) {
        const body = this.sample(op.body.schema, s, optionals);
        req.body = replaceIds(body, '', (field, v) => pick('body', field, v));
      }
      problems = this.requestProblems(op, req);
      if (problems.length === 0) return req;
    }
    throw new Error(`${op.id}: no valid request generated from seed ${seed}: ${problems.join('; ')}`);
  }

  /**
   * A value of `schema` from json-schema-faker, deterministic for a seed. Strings are generated at
   * most GENERATED_STRING_MAX characters long (or their minLength): a description may allow longer
   * ones (a photo as a data URI, up to 1,000,000), but several of them would pass the body limit
   * (413) together; the mutations still send maxLength + 1.
   */
  sample(schema: Schema, seed: number, optionals: number): unknown {
    return generateSync(capStrings(this.jsonSchema(this.schema(schema))), {
      seed: (Math.abs(seed) % 2_147_483_646) + 1,
      optionalsProbability: optionals,
      alwaysFakeOptionals: optionals >= 1,
      maxDefaultItems: 3,
    });
  }

  /** Every single-step way to make a valid request for `op` invalid, as the description tells. */
  mutations(op: Operation): Mutation[] {
    const out: Mutation[] = [];
    for (const p of op.parameters) {
      if (p.in === 'cookie') continue;
      const where = p.in;
      const schema = this.schema(p.schema ?? {});
      const set = (value: unknown) => (req: RequestParts) => {
        const next = clone(req);
        if (where === 'header') {
          deleteHeader(next.headers, p.name);
          if (value !== undefined) next.headers[p.name] = text(value);
        } else if (value === undefined) delete next[where][p.name];
        else next[where][p.name] = where === 'path' ? text(value) : value;
        return next;
      };
      if (p.required && where !== 'path') out.push({ where, field: p.name, what: 'left out', apply: set(undefined) });
      for (const [what, value] of badScalars(schema, true)) {
        if (where === 'path' && value === '') continue; // an empty segment is another route
        out.push({ where, field: p.name, what, apply: set(value) });
      }
    }
    if (op.body) {
      if (op.body.required)
        out.push({ where: 'body', field: '', what: 'no body', apply: (r) => withBody(r, undefined) });
      out.push({ where: 'body', field: '', what: 'a JSON array instead of an object', apply: (r) => withBody(r, []) });
      this.bodyMutations(op.body.schema, [], out);
    }
    return out;
  }

  private bodyMutations(schema: Schema, at: string[], out: Mutation[]): void {
    const field = at.join(SEP);
    const put = (value: unknown) => (req: RequestParts) => withBody(req, setAt(req.body, at, value));
    if (at.length) {
      if (schema.nullable !== true) out.push({ where: 'body', field, what: 'explicit null', apply: put(null) });
      for (const [what, value] of badScalars(schema, false))
        out.push({ where: 'body', field, what, apply: put(value) });
    }
    if (schema.type === 'object' || schema.properties) {
      if (schema.additionalProperties === false) {
        const extra = [...at, 'unexpectedField'].join(SEP);
        out.push({
          where: 'body',
          field: extra,
          what: 'an unknown property',
          apply: (req) => withBody(req, setAt(req.body, [...at, 'unexpectedField'], 'x')),
        });
      }
      for (const name of (schema.required ?? []) as string[]) {
        out.push({
          where: 'body',
          field: [...at, name].join(SEP),
          what: 'required property left out',
          apply: (req) => withBody(req, deleteAt(req.body, [...at, name])),
        });
      }
      for (const [name, prop] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
        this.bodyMutations(prop, [...at, name], out);
      }
    }
    if (schema.type === 'array' && schema.items && at.length) {
      if (typeof schema.minItems === 'number' && schema.minItems > 0) {
        out.push({ where: 'body', field, what: `fewer than ${schema.minItems} items`, apply: put([]) });
      }
      if (typeof schema.maxItems === 'number') {
        const items = Array.from({ length: schema.maxItems + 1 }, (_, i) => this.sample(schema.items, i + 1, 0));
        out.push({ where: 'body', field, what: `more than ${schema.maxItems} items`, apply: put(items) });
      }
      this.bodyMutations(schema.items, [...at, '0'], out);
    }
  }

  /**
   * What is wrong with an answer to `op`: a status or media type it does not declare, or a body
   * that does not match the declared schema.
   */
  responseProblems(op: Operation, status: number, contentType: string | undefined, text: string): string[] {
    const declared = op.responses[String(status)] ?? op.responses[`${String(status)[0]}XX`] ?? op.responses.default;
    if (!declared) return [`status ${status} is not declared (declared: ${Object.keys(op.responses).join(', ')})`];
    const content = declared.content;
    if (!content || Object.keys(content).length === 0) return [];
    const media = (contentType ?? '').split(';')[0].trim().toLowerCase();
    const entry = content[media];
    if (!entry)
      return [`media type ${media || '(none)'} is not declared for ${status} (declared: ${Object.keys(content)})`];
    if (!entry.schema) return [];
    let value: unknown = text;
    if (/[/+]json$/.test(media)) {
      try {
        value = JSON.parse(text);
      } catch {
        return [`${status} ${media} body is not JSON`];
      }
    }
    return this.check(`response ${op.id} ${status} ${media}`, entry.schema, value).map((e) => `${status} body: ${e}`);
  }
}

const GENERATED_STRING_MAX = 2000;

/** `schema` with every string's maxLength at most GENERATED_STRING_MAX (or its minLength). */
function capStrings(schema: Schema): Schema {
  if (schema === null || typeof schema !== 'object') return schema;
  if (Array.isArray(schema)) return schema.map(capStrings);
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    out[key] = key === 'enum' || key === 'const' || key === 'default' ? value : capStrings(value);
  }
  if (out.type === 'string' && !out.format && !out.enum) {
    out.maxLength = Math.max(out.minLength ?? 0, Math.min(out.maxLength ?? GENERATED_STRING_MAX, GENERATED_STRING_MAX));
  }
  return out;
}

/** Values that break `schema` one way each, with what they break. Parameters arrive as text. */
function badScalars(schema: Schema, asText: boolean): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [];
  const type = schema.type;
  if (type === 'string') {
    if (!asText && !schema.enum) out.push(['a number instead of a string', 12345]);
    if (schema.format === 'uuid') out.push(['not a uuid', 'not-a-uuid']);
    if (schema.format === 'date-time') out.push(['not a date-time', '2026-13-45T25:61:00Z']);
    if (schema.format === 'date') out.push(['not a date', '2026-13-45']);
    if (schema.format === 'email') out.push(['not an email', 'not-an-email']);
    if (schema.format === 'uri' || schema.format === 'url') out.push(['not a URI', 'not a uri']);
    if (Array.isArray(schema.enum)) out.push(['outside the enum', 'not-in-enum']);
    if (typeof schema.minLength === 'number' && schema.minLength > 0) {
      out.push([`shorter than ${schema.minLength}`, 'x'.repeat(schema.minLength - 1)]);
    }
    if (typeof schema.maxLength === 'number') {
      out.push([`longer than ${schema.maxLength}`, 'x'.repeat(schema.maxLength + 1)]);
    }
    if (typeof schema.pattern === 'string') {
      const re = new RegExp(schema.pattern, 'u');
      const miss = ['', ' ', '!', 'x', 'X', '0', '\u00e9', 'a b', 'not valid!', '12345678901234567890'].find(
        (c) =>
          !re.test(c) &&
          c.length >= (schema.minLength ?? (asText ? 1 : 0)) &&
          c.length <= (schema.maxLength ?? Infinity),
      );
      if (miss !== undefined) out.push([`not matching ${schema.pattern}`, miss]);
    }
  } else if (type === 'integer' || type === 'number') {
    out.push(['text instead of a number', asText ? 'abc' : '100']);
    if (type === 'integer') out.push(['not an integer', 1.5]);
    if (typeof schema.minimum === 'number') out.push([`below ${schema.minimum}`, schema.minimum - 1]);
    if (typeof schema.maximum === 'number') out.push([`above ${schema.maximum}`, schema.maximum + 1]);
    if (typeof schema.exclusiveMinimum === 'number') out.push(['at the exclusive minimum', schema.exclusiveMinimum]);
    if (typeof schema.exclusiveMaximum === 'number') out.push(['at the exclusive maximum', schema.exclusiveMaximum]);
    if (Array.isArray(schema.enum)) out.push(['outside the enum', -987654]);
  } else if (type === 'boolean') {
    out.push(['not a boolean', asText ? 'maybe' : 'true']);
  } else if (type === 'array' && !asText) {
    out.push(['a string instead of an array', 'x']);
  } else if (type === 'object' && !asText) {
    out.push(['a string instead of an object', 'x']);
  }
  return out;
}

/** A value as it goes into a URL or a header: strings as they are, anything else as JSON. */
export function text(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function clone<T>(value: T): T {
  return value === undefined ? value : structuredClone(value);
}

function withBody(req: RequestParts, body: unknown): RequestParts {
  const next = clone(req);
  if (body === undefined) delete next.body;
  else next.body = body;
  return next;
}

/** A copy of `root` with `value` at `at`, creating objects (or arrays, for numeric keys) on the way. */
function setAt(root: unknown, at: string[], value: unknown): unknown {
  if (at.length === 0) return value;
  const [head, ...rest] = at;
  const numeric = /^\d+$/.test(head);
  const base: any =
    root !== null && typeof root === 'object' ? clone(root) : numeric ? [] : ({} as Record<string, unknown>);
  base[head] = setAt(base[head], rest, value);
  return base;
}

function deleteAt(root: unknown, at: string[]): unknown {
  if (root === null || typeof root !== 'object') return root;
  const base: any = clone(root);
  if (at.length === 1) delete base[at[0]];
  else base[at[0]] = deleteAt(base[at[0]], at.slice(1));
  return base;
}

/** Generated values of UUID-named fields replaced through `replace` (field: dotted path). */
function replaceIds(value: unknown, at: string, replace: (field: string, v: unknown) => unknown): unknown {
  if (Array.isArray(value)) return value.map((v, i) => replaceIds(v, at ? `${at}.${i}` : String(i), replace));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, replaceIds(v, at ? `${at}.${k}` : k, replace)]),
    );
  }
  return at ? replace(at, value) : value;
}

export function headerValue(headers: Record<string, string>, name: string): string | undefined {
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : headers[key];
}

function deleteHeader(headers: Record<string, string>, name: string): void {
  for (const k of Object.keys(headers)) if (k.toLowerCase() === name.toLowerCase()) delete headers[k];
}

import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { startLocalIdp, type LocalIdp } from '../idp/provider';
import { getDemoToken } from '../idp/token';
import { signWebhook } from '../src/webhooks/signature';
import { cardKit } from './support/cards';
import { confirmedPayout, customerWithBeneficiary } from './support/fixtures';
import { type Harness, startHarness, WEBHOOK_SECRET } from './support/harness';
import {
  Contract,
  headerValue,
  type Mutation,
  type Operation,
  type RequestParts,
  text,
} from './support/openapi-contract';

/**
 * Property: openapi.json and the gateway agree both ways (issue 37, item 4).
 *
 * For every operation of the description (path × method), with the credential its `security` names:
 * an API key holding every scope (`bearer`), or a signed-in person's access token from a local
 * OpenID provider (`accessToken`, the people's routes, where an API key gets 403):
 * - VALID_CASES requests whose path, query, header and body values json-schema-faker generates
 *   from the description (and that the description, checked with Ajv, calls valid) are accepted:
 *   2xx, or a 404, 409 or 422 that the operation documents (an id that names nothing, a state that
 *   refuses the move). Half of them carry real ids (rows seeded below) where the description asks
 *   for an id, so that success paths run, not only 404s.
 * - INVALID_CASES requests are one such valid request with one thing made invalid as the
 *   description tells (`Contract.mutations`: a wrong type, a value out of bounds, outside its enum,
 *   pattern or format, an unknown property of a closed object, an explicit null, a missing required
 *   field or header, no body, a body that is not an object): each is refused with 400
 *   problem+json that names the field (`names`).
 * Generated requests also follow the rules the description states in words rather than in a
 * schema (`withinDocumentedRules`), and never reuse an Idempotency-Key.
 * - Every answer, valid case or not, is below 500, has a status the operation declares, the media
 *   type declared for it, and a body matching the declared schema.
 * - A method the description does not declare for a path is answered 405 problem+json.
 *
 * The cases are drawn by fast-check from a fixed seed (CONTRACT_SEED overrides it); a failure
 * prints that seed, the operation and the request and answer. Operations are exercised in
 * document order, except the two that destroy a seeded row (a subscription removed, a card
 * terminated), which run last. One operation is exercised off the description, for the reason
 * given in OFF_DESCRIPTION.
 */

const VALID_CASES = 6;
const INVALID_CASES = 8;
const SEED = Number(process.env.CONTRACT_SEED ?? 37_2026);

const contract = new Contract(JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'openapi.json'), 'utf8')));

/** Run last: they remove or end the seeded row that other operations use. */
const DESTRUCTIVE = ['webhookSubscriptions_remove', 'cards_terminate'];

/**
 * Operations whose requests cannot come from the description alone, and how they are exercised:
 * - webhooks_receive: its valid request is a body signed with the provider's secret
 *   (x-brails-signature, HMAC-SHA512 of the raw body), which no schema can generate, and the
 *   description has no schema for the body; valid cases sign an `{event, data}` built here (200),
 *   invalid cases send the header value the description generates, a wrong signature (401, as
 *   documented; not 400).
 */
const OFF_DESCRIPTION: Record<string, string> = {
  webhooks_receive: 'valid = signed by the test with the provider secret; invalid = wrong signature, 401',
};

/** Statuses a valid request may get besides 2xx, when the operation documents them. */
const STATE_STATUSES = [404, 409, 422];

const ids: Record<string, string[]> = {};

/** The people's routes' security scheme (src/auth/auth.decorators.ts ACCESS_TOKEN_SCHEME). */
const ACCESS_TOKEN = 'accessToken';
const AUDIENCE = 'urn:wallet-gateway:contract';

/** Whether the description asks a person's access token (not an API key) for `op`. */
function forPeople(op: Operation): boolean {
  const security = (contract.doc.paths[op.path][op.method].security ?? []) as Array<Record<string, unknown>>;
  return security.some((requirement) => ACCESS_TOKEN in requirement);
}

/** Real ids for a path parameter, by the route's resource. */
function realPathIds(op: Operation, param: string): string[] {
  const resource = op.path.split('/')[2] ?? '';
  if (param === 'messageId') return ids.message ?? [];
  if (param === 'country') return ['KE', 'NG'];
  const byResource: Record<string, string> = {
    transactions: 'transaction',
    'webhook-subscriptions': 'subscription',
    customers: 'customer',
    beneficiaries: 'beneficiary',
    payouts: 'payout',
    collections: 'collection',
    'swap-quotes': 'quote',
    swaps: 'swap',
    'virtual-accounts': 'virtualAccount',
    'card-holders': 'cardHolder',
    cards: 'card',
    'reconciliation-runs': 'reconciliationRun',
  };
  return ids[byResource[resource]] ?? [];
}

/** Real ids for a body or query field named like an id of a seeded row. */
function realFieldIds(field: string): string[] {
  const name = field.split('.').pop() ?? '';
  const byName: Record<string, string> = {
    customerId: 'customer',
    beneficiaryId: 'beneficiary',
    quoteId: 'quote',
    cardId: 'card',
  };
  return ids[byName[name]] ?? [];
}

/**
 * Whether a 400 problem names the field a mutation broke: an entry of `errors` for it (or for its
 * parent object, or one of its children). A header has no `errors` entry of its own when the
 * gateway answers with a dedicated code (`idempotency_key_missing`, `idempotency_key_invalid`):
 * there, the problem's title or detail names the header.
 */
function names(problem: any, mutation: Mutation): boolean {
  const want = mutation.field.toLowerCase();
  const fields: string[] = (problem?.errors ?? []).map((e: { field?: string }) => String(e.field ?? '').toLowerCase());
  if (fields.some((f) => f === want || want.startsWith(`${f}.`) || f.startsWith(`${want}.`))) return true;
  return mutation.where === 'header' && `${problem?.title} ${problem?.detail}`.toLowerCase().includes(want);
}

/**
 * Rules of a valid request that the JSON Schema of a parameter or property cannot state, each
 * written in the description's text, applied to generated requests so that they stay valid:
 * - `cursor` is "Opaque cursor from a previous page's `nextCursor`": a made-up one is refused
 *   (400), so generated requests leave it out (its mutations are still sent);
 * - `from` comes before `to` (a period), `amountMin` is at most `amountMax`: swapped if not;
 * - where the description says a period is "at most N days", `to` is moved within N days of `from`;
 * - a body property described "Required when <field> is <value>" is generated when it is so
 *   (OpenAPI 3.0 has no `if`/`then` to say it in the schema);
 * - a body property described "not the <x> <y>" (a swap's targetCurrency: "not the source
 *   currency") is generated again until it differs from `<x><Y>`;
 * - a body date described "not in the future" (a date of birth) is moved back by 28-year steps
 *   (the calendar repeats, so a 29 February stays a real date) until it is not after today (UTC).
 */
function withinDocumentedRules(op: Operation, req: RequestParts, seed: number): RequestParts {
  delete req.query.cursor;
  for (const bag of [req.query, req.body] as Array<Record<string, unknown> | undefined>) {
    if (!bag || typeof bag !== 'object' || Array.isArray(bag)) continue;
    for (const [low, high] of [
      ['from', 'to'],
      ['amountMin', 'amountMax'],
    ]) {
      const [a, b] = [bag[low], bag[high]];
      if (a === undefined || b === undefined) continue;
      if (after(a, b)) [bag[low], bag[high]] = [b, a];
    }
  }
  const body0 = req.body as Record<string, any> | undefined;
  for (const [name, prop] of Object.entries((op.body?.schema.properties ?? {}) as Record<string, any>)) {
    const when = /required when ([\w.]+) is (\w+)/i.exec(String(prop.description ?? ''));
    if (!when || !body0 || typeof body0 !== 'object' || body0[name] !== undefined) continue;
    const actual = when[1].split('.').reduce<any>((o, k) => o?.[k], body0);
    if (actual !== undefined && String(actual) === when[2]) body0[name] = contract.sample(prop, seed, 0);
  }
  for (const [name, prop] of Object.entries((op.body?.schema.properties ?? {}) as Record<string, any>)) {
    const not = /\bnot the (\w+) (\w+)\b/i.exec(String(prop.description ?? ''));
    if (!not || !body0 || typeof body0 !== 'object' || body0[name] === undefined) continue;
    const other = not[1].toLowerCase() + not[2][0].toUpperCase() + not[2].slice(1);
    for (let i = 1; i < 100 && body0[other] !== undefined && body0[name] === body0[other]; i++) {
      body0[name] = contract.sample(prop, seed + i, 0);
    }
  }
  for (const [name, prop] of Object.entries((op.body?.schema.properties ?? {}) as Record<string, any>)) {
    if (!/not in the future/i.test(String(prop.description ?? ''))) continue;
    if (!body0 || typeof body0 !== 'object' || typeof body0[name] !== 'string') continue;
    const today = new Date().toISOString().slice(0, 10);
    while (/^\d{4}-/.test(body0[name]) && body0[name] > today) {
      body0[name] = `${String(Number(body0[name].slice(0, 4)) - 28).padStart(4, '0')}${body0[name].slice(4)}`;
    }
  }
  const days = says(op, /at most (\d+) days/);
  const body = req.body as Record<string, unknown> | undefined;
  if (days && body && typeof body.from === 'string' && typeof body.to === 'string') {
    const from = Date.parse(body.from);
    const span = Number(days[1]) * 86_400_000;
    if (Date.parse(body.to) - from > span) body.to = new Date(from + span).toISOString();
  }
  return req;
}

/** Whether `a` comes after `b`: as whole numbers (amounts may be digit strings), else as dates. */
function after(a: unknown, b: unknown): boolean {
  if (/^\d+$/.test(text(a)) && /^\d+$/.test(text(b))) return BigInt(text(a)) > BigInt(text(b));
  return Date.parse(text(a)) > Date.parse(text(b));
}

/** `pattern` in the operation's description (its texts and its request body's schema), if there. */
function says(op: Operation, pattern: RegExp): RegExpMatchArray | null {
  return (JSON.stringify(contract.doc.paths[op.path][op.method]) + JSON.stringify(op.body?.schema ?? {})).match(
    pattern,
  );
}

interface Sent {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: unknown;
  rawBody?: string;
}
interface Answer {
  status: number;
  contentType?: string;
  text: string;
  body: any;
}

describe('openapi.json and the gateway agree (property, e2e)', () => {
  let h: Harness;
  let idp: LocalIdp;
  let authorization: string;
  /** A signed-in person's access token (ada at the local OpenID provider), for the people's routes. */
  let personAuthorization: string;

  beforeAll(async () => {
    // The provider (simulator) shares two busy cores with the rest: give it time, so that a slow
    // answer is not a 504 here (the gateway must not answer 5xx at all in this test).
    // Payouts of 5,000.00 USD and more wait for another API client's approval (maker-checker):
    // two are seeded that way, so that approve and reject have rows they can decide.
    idp = await startLocalIdp({ audience: AUDIENCE });
    h = await startHarness({
      env: {
        PROVIDER_TIMEOUT_MS: '15000',
        PAYOUT_APPROVAL_THRESHOLDS: 'USD:500000',
        OIDC_ISSUER: idp.issuer,
        OIDC_AUDIENCE: AUDIENCE,
      },
    });
    authorization = `Bearer ${await h.key()}`;
    personAuthorization = `Bearer ${(await getDemoToken(idp.issuer, 'ada', { resource: AUDIENCE })).access_token}`;
    const auth = { Authorization: authorization };
    const must = (res: { status: number; body: any }, what: string, status: number) => {
      if (res.status !== status) throw new Error(`seed ${what}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };

    const to = await customerWithBeneficiary(h, auth, 'contract@example.com');
    ids.beneficiary = [to.beneficiaryId];
    const confirmed = await confirmedPayout(h, auth, to, 1000);
    const created = must(
      await h
        .http()
        .post('/v1/payouts')
        .set(auth)
        .set('Idempotency-Key', randomUUID())
        .send({ ...to, amount: 1200, description: 'contract payout' }),
      'payout',
      201,
    );
    const maker = { Authorization: `Bearer ${await h.key()}` };
    const awaiting: string[] = [];
    for (let i = 0; i < 2; i++) {
      const held = must(
        await h
          .http()
          .post('/v1/payouts')
          .set(maker)
          .set('Idempotency-Key', randomUUID())
          .send({ ...to, amount: 600_000 + i, description: 'contract payout over the threshold' }),
        'payout awaiting approval',
        201,
      );
      if (held.status !== 'awaiting_approval') throw new Error(`seed payout: ${held.status}`);
      awaiting.push(held.id);
    }
    ids.payout = [confirmed.id, created.id, ...awaiting];
    const subscription = must(
      await h
        .http()
        .post('/v1/webhook-subscriptions')
        .set(auth)
        .send({ url: 'http://127.0.0.1:9/hooks', description: 'contract' }),
      'subscription',
      201,
    );
    ids.subscription = [subscription.id];
    const collection = must(
      await h
        .http()
        .post('/v1/collections')
        .set(auth)
        .set('Idempotency-Key', randomUUID())
        .send({
          customerId: to.customerId,
          country: 'KE',
          currency: 'KES',
          amount: 100_000,
          description: 'contract',
          payer: { type: 'mpesa', accountName: 'Ada Obi' },
        }),
      'collection',
      201,
    );
    ids.collection = [collection.id];
    const quotes = [];
    for (let i = 0; i < 3; i++) {
      quotes.push(
        must(
          await h
            .http()
            .post('/v1/swap-quotes')
            .set(auth)
            .send({ sourceCurrency: 'USD', targetCurrency: 'NGN', amount: 10_000 + i }),
          'quote',
          201,
        ),
      );
    }
    const swap = must(
      await h.http().post('/v1/swaps').set(auth).set('Idempotency-Key', randomUUID()).send({ quoteId: quotes[0].id }),
      'swap',
      201,
    );
    ids.quote = quotes.map((q) => q.id);
    ids.swap = [swap.id];
    const cards = cardKit(h, () => auth);
    const cardCustomer = await cards.customer('contract-card@example.com');
    ids.customer = [to.customerId, cardCustomer];
    ids.cardHolder = [(await cards.holder(cardCustomer)).id];
    const card = must(await cards.createCard(cardCustomer, 5000), 'card', 201);
    await cards.activate(card);
    ids.card = [card.id];
    const account = must(
      await h.http().post('/v1/virtual-accounts').set(auth).send({
        customerId: to.customerId,
        bank: 'safehaven',
        bvn: '22123456789',
        phoneNumber: '08012345678',
      }),
      'virtual account',
      201,
    );
    ids.virtualAccount = [account.id];
    const run = must(
      await h
        .http()
        .post('/v1/reconciliation-runs')
        .set(auth)
        .send({ from: '2026-01-01T00:00:00.000Z', to: '2026-01-02T00:00:00.000Z' }),
      'reconciliation run',
      202,
    );
    ids.reconciliationRun = [run.id];
    const ledger = must(await h.http().get('/v1/transactions?limit=5').set(auth), 'transactions', 200);
    ids.transaction = ledger.data.map((t: { id: string }) => t.id);
    const messages = must(
      await h.http().get(`/v1/webhook-subscriptions/${subscription.id}/messages`).set(auth),
      'messages',
      200,
    );
    ids.message = messages.data.map((m: { id: string }) => m.id);
    for (const [name, list] of Object.entries(ids)) {
      if (name !== 'message' && list.length === 0) throw new Error(`seed ${name}: none`);
    }
  });
  afterAll(async () => {
    await h?.close();
    await idp?.stop();
  });

  /** Sends `req` for `op` and returns what came back. */
  async function send(op: Operation, req: RequestParts): Promise<{ sent: Sent; answer: Answer }> {
    const route = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(req.path[name] ?? ''));
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(req.query)) {
      if (value !== undefined) query.append(name, typeof value === 'string' ? value : JSON.stringify(value));
    }
    const url = query.size ? `${route}?${query}` : route;
    const headers: Record<string, string> = {
      Authorization: forPeople(op) ? personAuthorization : authorization,
      ...req.headers,
    };
    const sent: Sent = { method: op.method.toUpperCase(), url, headers, body: req.body };
    let call = (h.http() as any)[op.method](url).set(headers);
    if (op.id === 'webhooks_receive') {
      const raw = JSON.stringify(req.body ?? {});
      sent.rawBody = raw;
      call = call.set('content-type', 'application/json').send(raw);
    } else if (req.body !== undefined) call = call.send(req.body);
    const res = await call.buffer(true).parse((r: any, done: (e: null, text: string) => void) => {
      let text = '';
      r.setEncoding('utf8');
      r.on('data', (chunk: string) => (text += chunk));
      r.on('end', () => done(null, text));
    });
    const text = typeof res.body === 'string' ? res.body : (res.text ?? '');
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { sent, answer: { status: res.status, contentType: res.headers['content-type'], text, body } };
  }

  /** Problems common to every answer: 5xx, undeclared status or media type, body off its schema. */
  function answerProblems(op: Operation, answer: Answer): string[] {
    const problems: string[] = [];
    if (answer.status >= 500) problems.push(`answered ${answer.status}`);
    problems.push(...contract.responseProblems(op, answer.status, answer.contentType, answer.text));
    return problems;
  }

  function report(op: Operation, what: string, sent: Sent, answer: Answer, problems: string[]): Error {
    return new Error(
      [
        `${op.id} (${op.method.toUpperCase()} ${op.path}), ${what}:`,
        ...problems.map((p) => `  - ${p}`),
        `request: ${sent.method} ${sent.url}`,
        `  headers: ${JSON.stringify({ ...sent.headers, Authorization: '…' })}`,
        `  body: ${sent.rawBody ?? JSON.stringify(sent.body)}`,
        `answer: ${answer.status} ${answer.contentType ?? ''}`,
        `  ${answer.text.slice(0, 1500)}`,
        `(CONTRACT_SEED=${SEED})`,
      ].join('\n'),
    );
  }

  /** A valid request for `op` from `seed`; with `real`, seeded rows' ids where ids are asked for. */
  function validRequest(op: Operation, seed: number, real: boolean, optionals: number): RequestParts {
    const choose = (list: string[], generated: unknown) =>
      real && list.length && typeof generated === 'string' ? list[Math.abs(seed) % list.length] : generated;
    const req = contract.validRequest(op, seed, optionals, (where, field, generated) => {
      if (where === 'path') return choose(realPathIds(op, field), generated);
      if (where === 'body' || where === 'query') return choose(realFieldIds(field), generated);
      return generated;
    });
    withinDocumentedRules(op, req, seed);
    freshIdempotencyKey(op, req);
    const left = contract.requestProblems(op, req);
    if (left.length) throw new Error(`${op.id}: generated request invalid after the documented rules: ${left}`);
    if (op.id === 'webhooks_receive') {
      const body = { event: `contract.test.${seed}`, data: { id: `contract-${seed}`, status: 'success' } };
      req.body = body;
      req.headers['x-brails-signature'] = signWebhook(JSON.stringify(body), WEBHOOK_SECRET);
    }
    return req;
  }

  const usedKeys = new Set<string>();
  let keySeed = 0;
  /**
   * Gives `req` an Idempotency-Key (from the header's schema) that no earlier request of this file
   * sent: a key seen before is a replay (or a 409 when the body differs), which would hide what the
   * case is about.
   */
  function freshIdempotencyKey(op: Operation, req: RequestParts): void {
    const param = op.parameters.find((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key');
    if (!param || headerValue(req.headers, param.name) === undefined) return;
    for (let tries = 0; tries < 1000; tries++) {
      const key = text(contract.sample(param.schema ?? { type: 'string' }, SEED + ++keySeed, 1));
      if (usedKeys.has(key)) continue;
      usedKeys.add(key);
      req.headers[param.name] = key;
      return;
    }
    throw new Error(`${op.id}: no unused Idempotency-Key after 1000 tries`);
  }

  const operations = contract.operations();
  const ordered = [
    ...operations.filter((op) => !DESTRUCTIVE.includes(op.id)),
    ...DESTRUCTIVE.map((id) => operations.find((op) => op.id === id)).filter((op): op is Operation => !!op),
  ];
  const seedOf = (op: Operation, salt: number) => {
    let x = SEED ^ salt;
    for (const c of op.id) x = (Math.imul(x, 31) + c.charCodeAt(0)) | 0;
    return x;
  };

  it('the description has operations, each with an id', () => {
    expect(operations.length).toBeGreaterThan(0);
    expect(ordered).toHaveLength(operations.length);
    expect(new Set(operations.map((op) => op.id)).size).toBe(operations.length);
    for (const id of [...DESTRUCTIVE, ...Object.keys(OFF_DESCRIPTION)]) {
      expect(operations.map((op) => op.id)).toContain(id);
    }
  });

  it('the oracle refuses answers off the description: an undeclared status or media type, a body off its schema', () => {
    let objects = 0;
    for (const op of operations) {
      expect(contract.responseProblems(op, 418, 'application/json', '{}')).not.toEqual([]);
      for (const [status, response] of Object.entries(op.responses)) {
        const json = response.content?.['application/json'] ?? response.content?.['application/problem+json'];
        if (!json?.schema) continue;
        const media = response.content?.['application/json'] ? 'application/json' : 'application/problem+json';
        expect(contract.responseProblems(op, Number(status), 'text/html', '<p>')).not.toEqual([]);
        if (contract.schema(json.schema).type === 'object') {
          objects++;
          expect(contract.responseProblems(op, Number(status), media, '[]')).not.toEqual([]);
        }
      }
    }
    expect(objects).toBeGreaterThan(operations.length);
  });

  describe.each(ordered.map((op) => [`${op.id} (${op.method.toUpperCase()} ${op.path})`, op] as const))(
    '%s',
    (_name, op) => {
      it(`${VALID_CASES} valid requests: accepted, each answer as declared`, async () => {
        await fc.assert(
          fc.asyncProperty(fc.integer({ min: 1, max: 2 ** 30 }), fc.boolean(), async (seed, real) => {
            const req = validRequest(op, seed, real, 0.5);
            const { sent, answer } = await send(op, req);
            const problems = answerProblems(op, answer);
            const ok =
              (answer.status >= 200 && answer.status < 300) ||
              (STATE_STATUSES.includes(answer.status) && op.responses[String(answer.status)] !== undefined);
            if (!ok) problems.unshift(`a valid request was not accepted (${answer.status})`);
            if (problems.length)
              throw report(op, `valid request (seed ${seed}, real ids ${real})`, sent, answer, problems);
          }),
          { numRuns: VALID_CASES, seed: seedOf(op, 1), endOnFailure: true },
        );
      });

      const mutations = op.id === 'webhooks_receive' ? [] : contract.mutations(op);
      if (op.id === 'webhooks_receive') {
        it(`${INVALID_CASES} wrongly signed callbacks: 401 problem+json, as declared`, async () => {
          await fc.assert(
            fc.asyncProperty(fc.integer({ min: 1, max: 2 ** 30 }), async (seed) => {
              const req = validRequest(op, seed, false, 0.5);
              req.headers['x-brails-signature'] = text(
                contract.sample(op.parameters.find((p) => p.name === 'x-brails-signature')?.schema ?? {}, seed, 1),
              );
              const { sent, answer } = await send(op, req);
              const problems = answerProblems(op, answer);
              if (answer.status !== 401) problems.unshift(`expected 401, got ${answer.status}`);
              if (problems.length) throw report(op, `wrong signature (seed ${seed})`, sent, answer, problems);
            }),
            { numRuns: INVALID_CASES, seed: seedOf(op, 2), endOnFailure: true },
          );
        });
      } else if (mutations.length === 0) {
        it('takes no input the description could make invalid', () => {
          // An operation with inputs but no way to make them invalid: the description allows any
          // value of each (e.g. a path id without `format: uuid`), which the gateway does not.
          expect({ parameters: op.parameters.map((p) => `${p.in} ${p.name}`), body: op.body }).toEqual({
            parameters: [],
            body: undefined,
          });
        });
      } else {
        it(`${INVALID_CASES} requests with one thing invalid: 400 problem+json naming it`, async () => {
          await fc.assert(
            fc.asyncProperty(
              fc.integer({ min: 1, max: 2 ** 30 }),
              fc.constantFrom(...mutations),
              async (seed, mutation: Mutation) => {
                const base = validRequest(op, seed, true, 1);
                const req = mutation.apply(base);
                const invalid = contract.requestProblems(op, req);
                const label = `${mutation.where} ${mutation.field || '(body)'}: ${mutation.what} (seed ${seed})`;
                // The mutation must make the request invalid by the description itself.
                if (invalid.length === 0) throw new Error(`${op.id}: ${label} is still valid by the description`);
                const { sent, answer } = await send(op, req);
                const problems = answerProblems(op, answer);
                if (answer.status !== 400) problems.unshift(`expected 400 for ${label}, got ${answer.status}`);
                else if (!/^application\/problem\+json/.test(answer.contentType ?? '')) {
                  problems.unshift(`400 is not problem+json (${answer.contentType})`);
                } else if (mutation.field && !names(answer.body, mutation)) {
                  problems.unshift(`the 400 problem does not name ${mutation.field}`);
                }
                if (problems.length) throw report(op, label, sent, answer, problems);
              },
            ),
            { numRuns: INVALID_CASES, seed: seedOf(op, 2), endOnFailure: true },
          );
        });
      }
    },
  );

  it('a method the description does not declare for a path: 405 problem+json', async () => {
    const wrong: string[] = [];
    for (const route of Object.keys(contract.doc.paths)) {
      const declared = contract.methods(route);
      const url = route.replace(/\{([^}]+)\}/g, (_m, name: string) => (name === 'country' ? 'KE' : randomUUID()));
      for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
        if (declared.includes(method)) continue;
        const res = await (h.http() as any)[method](url).set({ Authorization: authorization });
        if (res.status !== 405 || !/^application\/problem\+json/.test(res.headers['content-type'] ?? '')) {
          wrong.push(`${method.toUpperCase()} ${route}: ${res.status} ${res.headers['content-type'] ?? ''}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });
});

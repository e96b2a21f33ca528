import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { generateSigningSecret, SECRET_BYTES, signStandardWebhook } from './standard-webhooks';

/** The Standard Webhooks specification's published test vector. */
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

/** The spec's scheme written out with node:crypto, independent of the package. */
function specSignature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

describe('Standard Webhooks signing', () => {
  it("reproduces the specification's test vector", () => {
    const headers = signStandardWebhook(VECTOR.secret, VECTOR.id, new Date(VECTOR.timestamp * 1000), VECTOR.body);
    expect(headers).toEqual({
      'webhook-id': VECTOR.id,
      'webhook-timestamp': String(VECTOR.timestamp),
      'webhook-signature': VECTOR.signature,
    });
    expect(specSignature(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.signature);
  });

  it('signs in whole seconds: the timestamp header is what was signed', () => {
    const at = new Date(VECTOR.timestamp * 1000 + 999);
    const headers = signStandardWebhook(VECTOR.secret, VECTOR.id, at, VECTOR.body);
    expect(headers['webhook-timestamp']).toBe(String(VECTOR.timestamp));
    expect(headers['webhook-signature']).toBe(VECTOR.signature);
  });

  it('new secrets are whsec_ + base64 of 32 random bytes, and the reference verifier accepts what they sign', () => {
    const secret = generateSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(SECRET_BYTES);
    expect(generateSigningSecret()).not.toBe(secret);

    const body = JSON.stringify({ type: 'payout.succeeded', timestamp: new Date().toISOString(), data: { amount: 1 } });
    const headers = signStandardWebhook(secret, 'b7a1c7f2-5a55-4c1e-9a0e-1f3d8c2b9e10', new Date(), body);
    expect(headers['webhook-signature']).toBe(
      specSignature(secret, headers['webhook-id'], Number(headers['webhook-timestamp']), body),
    );
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret).verify(`${body} `, { ...headers })).toThrow(/No matching signature/);
    expect(() => new Webhook(generateSigningSecret()).verify(body, { ...headers })).toThrow(/No matching signature/);
  });
});

import { BearerChallengeError } from '../common/errors';
import type { AppUser } from './access-token.verifier';
import { requireStepUp, type StepUpPolicy } from './step-up.guard';

const user = (over: Partial<AppUser> = {}): AppUser => ({
  issuer: 'https://idp.example',
  subject: 'p1',
  emailVerified: true,
  scopes: [],
  ...over,
});
const policy: StepUpPolicy = { maxAge: 300, acrValues: ['urn:mfa'] };
const NOW = 1_800_000_000;

function refusal(u: AppUser, p: StepUpPolicy = policy): BearerChallengeError {
  try {
    requireStepUp(u, p, NOW);
  } catch (error) {
    if (error instanceof BearerChallengeError) return error;
    throw error;
  }
  throw new Error('expected a step-up refusal');
}

describe('requireStepUp (RFC 9470)', () => {
  it('lets a recent sign-in through, up to max age', () => {
    expect(() => requireStepUp(user({ authTime: NOW - 300 }), policy, NOW)).not.toThrow();
    expect(() => requireStepUp(user({ authTime: NOW }), policy, NOW)).not.toThrow();
  });

  it('lets a strong sign-in through whatever its age', () => {
    expect(() => requireStepUp(user({ authTime: NOW - 86_400, acr: 'urn:mfa' }), policy, NOW)).not.toThrow();
    expect(() => requireStepUp(user({ acr: 'urn:mfa' }), policy, NOW)).not.toThrow();
  });

  it('refuses an old weak sign-in with the RFC 9470 challenge', () => {
    const error = refusal(user({ authTime: NOW - 301, acr: 'urn:pwd' }));
    expect(error.status).toBe(401);
    expect(error.code).toBe('step_up_required');
    expect(error.challenge).toBe(
      'Bearer error="insufficient_user_authentication", error_description="The sign-in is 301 s old; this needs one within 300 s or a stronger one.", acr_values="urn:mfa", max_age=300',
    );
    expect(error.extensions).toEqual({ maxAge: 300, acrValues: ['urn:mfa'] });
  });

  it('refuses a token that does not say when the person signed in, or says a time far in the future', () => {
    expect(refusal(user()).challenge).toContain('does not say when');
    expect(refusal(user({ authTime: NOW + 3600 })).code).toBe('step_up_required');
  });

  it('leaves acr_values out of the challenge when no acr counts as strong', () => {
    const error = refusal(user({ authTime: NOW - 1000, acr: 'urn:mfa' }), { maxAge: 60, acrValues: [] });
    expect(error.challenge).toMatch(
      /^Bearer error="insufficient_user_authentication", error_description="[^"]+", max_age=60$/,
    );
  });
});

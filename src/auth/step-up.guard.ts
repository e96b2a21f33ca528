import { applyDecorators, type CanActivate, type ExecutionContext, Injectable, UseGuards } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { ApiProblem } from '../common/api-responses';
import { BearerChallengeError, ErrorCode, quoteAuthParam } from '../common/errors';
import type { Env } from '../config/env';
import type { AppUser } from './access-token.verifier';

/** What counts as a recent or strong sign-in (STEP_UP_MAX_AGE, STEP_UP_ACR_VALUES). */
export interface StepUpPolicy {
  /** Seconds since `auth_time` within which a sign-in is recent enough. */
  maxAge: number;
  /** `acr` values that count as strong whatever the sign-in's age. */
  acrValues: string[];
}

/**
 * Whether `user` signed in recently enough (`auth_time` at most `policy.maxAge` seconds before
 * `nowSeconds`, and not in the future beyond 60 s of skew) or strongly enough (`acr` in
 * `policy.acrValues`) for a route that moves money (RFC 9470).
 * @throws BearerChallengeError 401 `step_up_required` with `WWW-Authenticate: Bearer
 * error="insufficient_user_authentication", error_description="…", acr_values="…", max_age=…`.
 */
export function requireStepUp(user: AppUser, policy: StepUpPolicy, nowSeconds: number): void {
  if (user.acr !== undefined && policy.acrValues.includes(user.acr)) return;
  const age = user.authTime === undefined ? undefined : nowSeconds - user.authTime;
  if (age !== undefined && age <= policy.maxAge && age >= -60) return;
  const description =
    age === undefined
      ? 'The token does not say when the user signed in; sign in again.'
      : `The sign-in is ${Math.floor(age)} s old; this needs one within ${policy.maxAge} s${policy.acrValues.length > 0 ? ' or a stronger one' : ''}.`;
  const challenge = [
    'Bearer error="insufficient_user_authentication"',
    `error_description=${quoteAuthParam(description)}`,
    ...(policy.acrValues.length > 0 ? [`acr_values=${quoteAuthParam(policy.acrValues.join(' '))}`] : []),
    `max_age=${policy.maxAge}`,
  ].join(', ');
  throw new BearerChallengeError(ErrorCode.StepUpRequired, description, challenge, {
    maxAge: policy.maxAge,
    ...(policy.acrValues.length > 0 ? { acrValues: policy.acrValues } : {}),
  });
}

/**
 * Route guard behind `@RequireStepUp()`: a person's token (set by ApiKeyGuard, which runs first as
 * the global guard) must show a recent or strong sign-in (requireStepUp). API keys are not people
 * and pass unchanged. Runs before the handler: a refused request writes nothing and calls no provider.
 */
@Injectable()
export class StepUpGuard implements CanActivate {
  private readonly policy: StepUpPolicy;

  constructor(config: ConfigService<Env, true>) {
    const acr = config.get('STEP_UP_ACR_VALUES', { infer: true });
    this.policy = {
      maxAge: config.get('STEP_UP_MAX_AGE', { infer: true }),
      acrValues: acr ? acr.split(',').filter((v) => v !== '') : [],
    };
  }

  /** @throws BearerChallengeError 401 `step_up_required` (requireStepUp). */
  canActivate(context: ExecutionContext): boolean {
    const user = context.switchToHttp().getRequest<{ appUser?: AppUser }>().appUser;
    if (user) requireStepUp(user, this.policy, Date.now() / 1000);
    return true;
  }
}

/** A route that needs a recent or strong sign-in from a person (StepUpGuard); documented in OpenAPI. */
export const RequireStepUp = () =>
  applyDecorators(
    UseGuards(StepUpGuard),
    ApiProblem(
      401,
      'step_up_required: the sign-in is too old or too weak (`WWW-Authenticate: Bearer error="insufficient_user_authentication"`, with `acr_values` and `max_age`); sign in again.',
    ),
  );

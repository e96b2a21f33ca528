import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { ProblemDto, UnsettledProblemDto } from './problem.dto';

/** The media type of every error answer (RFC 9457), as the problem filter sends it. */
export const PROBLEM_MEDIA_TYPE = 'application/problem+json';

/**
 * Documents one error answer: `status` with an `application/problem+json` body of `type`
 * (ProblemDto unless the route adds fields). Every error decorator of the API goes through this
 * one, so the spec states the media type the server sends (a generated client then reads the body
 * as its typed error) whatever the route produces on success (e.g. text/csv).
 */
export const ApiProblem = (
  status: number,
  description: string,
  type: typeof ProblemDto | typeof UnsettledProblemDto = ProblemDto,
) =>
  applyDecorators(
    ApiExtraModels(ProblemDto, UnsettledProblemDto),
    ApiResponse({ status, description, content: { [PROBLEM_MEDIA_TYPE]: { schema: { $ref: getSchemaPath(type) } } } }),
  );

/** Documents the 400 answer of a route with a validated body or query. */
export const ApiValidationErrors = () => ApiProblem(400, 'validation_failed: the failing fields are in `errors`.');

/**
 * Documents the 422 `business_rule_failed` answer of a route (BusinessRuleError): a request valid by
 * the description refused by a rule it cannot state as a schema; `when` says which.
 */
export const ApiBusinessRule = (when: string) =>
  ApiProblem(422, `business_rule_failed: ${when} (the fields are in \`errors\`).`);

/** Documents 404 for a route with an `{id}`. */
export const ApiNotFound = (resource: string) => ApiProblem(404, `not_found: no ${resource} with this id.`);

/** Documents 409 with the conflict's meaning. */
export const ApiConflict = (description: string) => ApiProblem(409, description);

/** The second sentence of a 422 description that also answers `business_rule_failed` (`when`), else ''. */
const andBusinessRule = (when?: string) =>
  when ? ` business_rule_failed: ${when} (the fields are in \`errors\`).` : '';

/**
 * Documents the answers of a route that calls the provider: 422, 502 and 504. `businessRule`: when
 * the route also answers 422 `business_rule_failed` (BusinessRuleError), what refuses (one 422 entry
 * holds both).
 */
export const ApiProviderErrors = (businessRule?: string) =>
  applyDecorators(
    ApiProblem(
      422,
      'provider_rejected: the provider refused the request; its message is in `detail`.' +
        andBusinessRule(businessRule),
    ),
    ApiProblem(
      502,
      'provider_unavailable: the provider failed (5xx or a malformed answer); provider_amount_mismatch: its answer ' +
        'states another amount or currency than was asked (`asked`, `answered`, `hint`); nothing usable is stored and ' +
        'a ledger row already written is held in `needs_review`.',
    ),
    ApiProblem(504, 'provider_timeout: the provider did not answer in time.'),
  );

/**
 * Documents the answers of a route whose provider call moves money (payout create/confirm,
 * collection create, swap execute, card create/top-up/withdrawal): 422, and 502/504 whose problem
 * names the movement's ledger row, left `unknown`, and by when it is settled (`settlesBy`).
 * `businessRule`: as for ApiProviderErrors.
 */
export const ApiUnsettledProviderErrors = (businessRule?: string) =>
  applyDecorators(
    ApiProblem(
      422,
      'provider_rejected: the provider refused the request; its message is in `detail`. Nothing moved.' +
        andBusinessRule(businessRule),
    ),
    ApiProblem(
      502,
      'provider_unavailable: the provider failed (5xx or a malformed answer). The movement is `unknown` ' +
        '(`transactionId`, `transactionStatus`) and settled by `settlesBy`; do not start it again before.',
      UnsettledProblemDto,
    ),
    ApiProblem(
      504,
      'provider_timeout: the provider did not answer in time. The movement is `unknown` (`transactionId`, ' +
        '`transactionStatus`) and settled by `settlesBy`; do not start it again before.',
      UnsettledProblemDto,
    ),
  );

import { applyDecorators } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiGatewayTimeoutResponse,
  ApiNotFoundResponse,
  ApiResponse,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { ProblemDto, UnsettledProblemDto } from './problem.dto';

/** Documents the 400 answer of a route with a validated body or query. */
export const ApiValidationErrors = () =>
  ApiBadRequestResponse({ type: ProblemDto, description: 'validation_failed: the failing fields are in `errors`.' });

/** Documents 404 for a route with an `{id}`. */
export const ApiNotFound = (resource: string) =>
  ApiNotFoundResponse({ type: ProblemDto, description: `not_found: no ${resource} with this id.` });

/** Documents 409 with the conflict's meaning. */
export const ApiConflict = (description: string) => ApiConflictResponse({ type: ProblemDto, description });

/** Documents the answers of a route that calls the provider: 422, 502 and 504. */
export const ApiProviderErrors = () =>
  applyDecorators(
    ApiUnprocessableEntityResponse({
      type: ProblemDto,
      description: 'provider_rejected: the provider refused the request; its message is in `detail`.',
    }),
    ApiResponse({
      status: 502,
      type: ProblemDto,
      description:
        'provider_unavailable: the provider failed (5xx or a malformed answer); provider_amount_mismatch: its answer ' +
        'states another amount or currency than was asked (`asked`, `answered`, `hint`); nothing usable is stored and ' +
        'a ledger row already written is held in `needs_review`.',
    }),
    ApiGatewayTimeoutResponse({
      type: ProblemDto,
      description: 'provider_timeout: the provider did not answer in time.',
    }),
  );

/**
 * Documents the answers of a route whose provider call moves money (payout create/confirm,
 * collection create, swap execute, card create/top-up/withdrawal): 422, and 502/504 whose problem
 * names the movement's ledger row, left `unknown`, and by when it is settled (`settlesBy`).
 */
export const ApiUnsettledProviderErrors = () =>
  applyDecorators(
    ApiUnprocessableEntityResponse({
      type: ProblemDto,
      description: 'provider_rejected: the provider refused the request; its message is in `detail`. Nothing moved.',
    }),
    ApiResponse({
      status: 502,
      type: UnsettledProblemDto,
      description:
        'provider_unavailable: the provider failed (5xx or a malformed answer). The movement is `unknown` ' +
        '(`transactionId`, `transactionStatus`) and settled by `settlesBy`; do not start it again before.',
    }),
    ApiGatewayTimeoutResponse({
      type: UnsettledProblemDto,
      description:
        'provider_timeout: the provider did not answer in time. The movement is `unknown` (`transactionId`, ' +
        '`transactionStatus`) and settled by `settlesBy`; do not start it again before.',
    }),
  );

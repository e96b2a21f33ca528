import {
  applyDecorators,
  CallHandler,
  ExecutionContext,
  HttpCode,
  Injectable,
  NestInterceptor,
  UseInterceptors,
} from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { from, lastValueFrom, Observable } from 'rxjs';
import type { AuthenticatedClient } from '../../auth/auth.decorators';
import { ApiProblem } from '../api-responses';
import { DomainError, ErrorCode } from '../errors';
import { IDEMPOTENT_SUCCESS_STATUS } from './idempotency-context';
import { IdempotencyService, isReplayedAnswer, requestFingerprint } from './idempotency.service';

/** The Idempotency-Key rule: 1 to 255 printable ASCII characters (no space); also its documented schema. */
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** Runs a money-moving route under its `Idempotency-Key` (see IdempotencyService). */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  /** Whether the route's work claims the key itself, in its first write (IdempotencyService.run `deferClaim`). */
  protected readonly deferClaim: boolean = false;

  constructor(private readonly idempotency: IdempotencyService) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<FastifyRequest & { apiClient: AuthenticatedClient }>();
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const key = request.headers['idempotency-key'];
    if (typeof key !== 'string' || !KEY_PATTERN.test(key)) {
      throw new DomainError(
        ErrorCode.IdempotencyKeyMissing,
        'Send an Idempotency-Key header (1-255 printable characters) with this request.',
      );
    }
    const fingerprint = requestFingerprint(
      request.method,
      `${request.routeOptions.url} ${JSON.stringify(request.params)}`,
      request.body,
    );
    return from(
      this.idempotency
        .run(
          request.apiClient.id,
          key,
          fingerprint,
          async () => ({
            status: IDEMPOTENT_SUCCESS_STATUS,
            body: await lastValueFrom(next.handle()),
          }),
          { deferClaim: this.deferClaim },
        )
        .then(
          (result) => {
            if (result.replayed) void reply.header('idempotent-replayed', 'true');
            return result.body;
          },
          (error: unknown) => {
            // A stored error answer replayed (a kept 404, 422, 504…) says so too.
            if (isReplayedAnswer(error)) void reply.header('idempotent-replayed', 'true');
            throw error;
          },
        ),
    );
  }
}

/**
 * IdempotencyInterceptor for a route whose work claims the key in its own first write (a deferred
 * claim: see IdempotencyService.run): the route's service must run `idempotentClaimSql` in the
 * statement of its first write, or `holdIdempotencyClaim()` before it writes or sends anything else.
 */
@Injectable()
export class DeferredClaimIdempotencyInterceptor extends IdempotencyInterceptor {
  protected override readonly deferClaim = true;
}

/**
 * Marks a money-moving POST: requires `Idempotency-Key`, replays the first answer for the same
 * key and body, answers 201. Documents the header and the 409 answers. `claimInWork`: the route's
 * work claims the key itself in its first write (DeferredClaimIdempotencyInterceptor), which saves a
 * statement and a commit per request; the answers are the same.
 */
export const Idempotent = (options: { claimInWork?: boolean } = {}) =>
  applyDecorators(
    HttpCode(201),
    UseInterceptors(options.claimInWork ? DeferredClaimIdempotencyInterceptor : IdempotencyInterceptor),
    ApiHeader({
      name: 'Idempotency-Key',
      required: true,
      description:
        'Unique per money movement (e.g. a UUID). The same key with the same body replays the first answer for 24 h. ' +
        '1 to 255 printable ASCII characters, no space (else 400 idempotency_key_missing).',
      schema: { type: 'string', minLength: 1, maxLength: 255, pattern: KEY_PATTERN.source },
    }),
    ApiProblem(
      409,
      'idempotency_key_reused (same key, other body), request_in_progress, or a conflict of the resource.',
    ),
  );

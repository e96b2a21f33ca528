import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { auditedChangeRecorded, auditedChangeSql, recordAuditedChange } from '../audit/audit-chain';
import { ownedByCurrentClient, ownerRestriction } from '../audit/ownership';
import { BeneficiariesService } from '../beneficiaries/beneficiaries.service';
import { providerCallbackUrl } from '../common/callback-url';
import {
  BusinessRuleError,
  DomainError,
  ErrorCode,
  InvalidStateTransitionError,
  NotFoundError,
  providerDidNotAct,
} from '../common/errors';
import { holdIdempotencyClaim, idempotentWriteSql, lostClaim } from '../common/idempotency/idempotency-context';
import { newReference } from '../common/reference';
import { type Env, parseApprovalThresholds, parseDuration } from '../config/env';
import { CustomersService } from '../customers/customers.service';
import type { Prisma, Transaction } from '../generated/prisma/client';
import { OutboxService } from '../outbound/outbox.service';
import { ProviderClient } from '../provider';
import type { LedgerRow } from '../transactions/ledger-row';
import { LedgerService } from '../transactions/ledger.service';
import { toPayoutDto, toTransactionEventData } from '../transactions/transaction.mapper';
import { CreatePayoutDto, PayoutDecisionDto, PayoutDto } from './payout.dto';
import { CONFIRM_CLAIMABLE, CONFIRM_WON, type PayoutRefs, PayoutsRepository } from './payouts.repository';

/**
 * 422 `business_rule_failed`: the payout's beneficiary is another customer's, or not registered with
 * the provider (no provider id) — a rule across rows, not something the body's schema can state.
 */
function notTheCustomersBeneficiary(): BusinessRuleError {
  return new BusinessRuleError([
    { field: 'beneficiaryId', message: 'beneficiaryId must be a registered beneficiary of this customer' },
  ]);
}

/** Why a payout written ahead was released: the database went away before the provider was called. */
export const DATABASE_LOST_BEFORE_CALL = 'database unavailable before the provider was called';

/**
 * The `details` of a decision's audit event (`payout.approve`, `payout.reject`): `{decision, reason}`,
 * the reason null when none was given. The same as the status history entry's payload, so the
 * trail alone says what was decided and why.
 */
function decisionDetails(decision: 'approved' | 'rejected', input: PayoutDecisionDto): Record<string, unknown> {
  return { decision, reason: input.reason ?? null };
}

/**
 * Payouts in two steps (docs/provider.md#payouts): initialize (`initiated`,
 * with fee and rate), then confirm (provider finalize, `pending`). Write-ahead: the ledger row
 * exists (status `created`) before the provider is called and holds its answer after. A provider
 * refusal marks it `failed`; a timeout or 5xx marks it `unknown` for reconciliation; it is never
 * deleted and never retried into a second payout.
 */
@Injectable()
export class PayoutsService {
  /** PAYOUT_APPROVAL_THRESHOLDS: minor units per currency from which a payout needs approval. */
  private readonly thresholds: Map<string, bigint>;
  /** PAYOUT_APPROVAL_TTL in ms. */
  private readonly approvalTtlMs: number;

  constructor(
    private readonly repository: PayoutsRepository,
    private readonly ledger: LedgerService,
    private readonly provider: ProviderClient,
    private readonly customers: CustomersService,
    private readonly beneficiaries: BeneficiariesService,
    private readonly config: ConfigService<Env, true>,
    private readonly outbox: OutboxService,
  ) {
    this.thresholds = parseApprovalThresholds(this.config.get('PAYOUT_APPROVAL_THRESHOLDS', { infer: true }));
    this.approvalTtlMs = parseDuration(this.config.get('PAYOUT_APPROVAL_TTL', { infer: true }));
  }

  /**
   * Initializes a payout of `amount` minor units of `sourceCurrency` (default USD), created by API
   * client `clientId` (kept as `createdBy`). A payout whose amount reaches its currency's
   * PAYOUT_APPROVAL_THRESHOLDS is stored `awaiting_approval` instead, with no provider call, and
   * `payout.approval_required` announced: a second API client approves it (approve) or rejects it.
   * @throws NotFoundError (404) customer or beneficiary; BusinessRuleError (422) beneficiary of another
   * customer, unknown currency, or an amount beyond the provider's int32 (ProviderClient.checkAmountFits:
   * nothing written, held or sent); ProviderError (422/502/504) with the ledger row kept (`failed`/`unknown`);
   * ProviderAmountMismatchError (502 `provider_amount_mismatch`) when the initialize answer states
   * another amount or wallet currency: the row goes to `needs_review` (never confirmable: 409).
   */
  async create(input: CreatePayoutDto, clientId: string | null = null): Promise<PayoutDto> {
    const currency = input.sourceCurrency ?? 'USD';
    this.provider.checkAmountFits('initializePayout', BigInt(input.amount), currency);
    // The row's id is chosen here so that the provider's reference carries it (newReference).
    const id = randomUUID();
    const data = {
      id,
      kind: 'payout' as const,
      direction: 'debit' as const,
      amount: BigInt(input.amount),
      currency,
      customerId: input.customerId,
      beneficiaryId: input.beneficiaryId,
      reference: newReference('payout', id),
      description: input.description,
      createdBy: clientId,
    };
    if (this.needsApproval(data.amount, currency)) return this.hold(input, data);
    // Write-ahead in ONE statement: the customer and beneficiary read, the Idempotency-Key claimed
    // (POST /v1/payouts defers its claim to here), and, only if both are found and match, the row,
    // its history, the key's note and the audit event. Committed before the provider is called.
    const { row, found: refs } = await this.ledger.recordGuarded(
      data,
      this.repository.payoutRefsGuard(input.customerId, input.beneficiaryId, ownerRestriction()),
    );
    if (!row) throw this.refsRefusal(input, refs);
    return this.initializeUpstream(row, refs.refCustomerEmail as string, refs.refBeneficiaryProviderId as string);
  }

  /**
   * Why a payout's write-ahead guard (PayoutsRepository.payoutRefsGuard) did not hold, as the
   * request's answer: 404 for a customer or beneficiary absent (or another client's under
   * OWNERSHIP=client), else 400 for a beneficiary of another customer or not registered upstream.
   */
  private refsRefusal(input: CreatePayoutDto, refs: PayoutRefs): DomainError {
    if (!refs.refCustomerId || !ownedByCurrentClient({ createdBy: refs.refCustomerCreatedBy })) {
      return new NotFoundError('Customer', input.customerId);
    }
    if (!refs.refBeneficiaryId || !ownedByCurrentClient({ createdBy: refs.refBeneficiaryCreatedBy })) {
      return new NotFoundError('Beneficiary', input.beneficiaryId);
    }
    return notTheCustomersBeneficiary();
  }

  /**
   * A payout at or above its currency's approval threshold: stored `awaiting_approval` (no provider
   * call) with `payout.approval_required` announced, in one database transaction, after the
   * Idempotency-Key is claimed on its own and the customer and beneficiary checked.
   */
  private async hold(
    input: CreatePayoutDto,
    data: Omit<Prisma.TransactionUncheckedCreateInput, 'status'> & { createdBy: string | null },
  ): Promise<PayoutDto> {
    await holdIdempotencyClaim();
    const [customer, beneficiary] = await Promise.all([
      this.customers.requireRow(input.customerId),
      this.beneficiaries.requireRow(input.beneficiaryId),
    ]);
    if (beneficiary.customerId !== customer.id || !beneficiary.providerId) {
      throw notTheCustomersBeneficiary();
    }
    const held = await this.repository.withTransaction(async (tx) => {
      const row = await this.ledger.record(
        { ...data, counterCurrency: beneficiary.currency, status: 'awaiting_approval' },
        'api',
        tx,
      );
      await this.outbox.publish(
        'payout.approval_required',
        { ...toTransactionEventData(row), actorId: data.createdBy },
        tx,
      );
      return row;
    });
    return toPayoutDto(held);
  }

  /**
   * Whether a payout of `amount` minor units of `currency` needs approval: its currency has a
   * threshold in PAYOUT_APPROVAL_THRESHOLDS and the amount reaches it (amount >= threshold).
   */
  needsApproval(amount: bigint, currency: string): boolean {
    const threshold = this.thresholds.get(currency.toUpperCase());
    return threshold !== undefined && amount >= threshold;
  }

  /**
   * Approves a payout `awaiting_approval` (maker-checker) as API client `approverId`: the decision is
   * claimed in the statement that moves the row to `created` (LedgerService.claimTransition: only
   * from `awaiting_approval`, by another client than its creator, within PAYOUT_APPROVAL_TTL; history:
   * source `api`, the approver as actor, `{decision: 'approved'}`; `approvedAt` set: the payout's
   * quote window and settlement deadline count from it), and in that database transaction
   * the Idempotency-Key notes the payout, `payout.approved` is announced and the request's audit event
   * (`payout.approve`) is written. Of concurrent decisions (approvals, a rejection, the expiry job)
   * exactly one wins; only the approval that won initializes it upstream, once, exactly as a payout
   * below the threshold (write-ahead: the row exists before the call; a refusal → `failed`, a timeout
   * → `unknown`). Confirm follows as usual (POST /v1/payouts/{id}/confirm).
   * @throws NotFoundError (404); DomainError 403 `approver_is_creator` when the approver created it;
   * InvalidStateTransitionError (409) unless `awaiting_approval` when the decision is claimed (already
   * decided, also by a concurrent request, or its PAYOUT_APPROVAL_TTL lapsed: it is then marked
   * `expired`): nothing is sent to the provider; ProviderError as for create.
   */
  async approve(id: string, approverId: string, decision: PayoutDecisionDto = {}): Promise<PayoutDto> {
    await this.requireDecidable(id, approverId, 'created');
    const approved = await this.repository.withTransaction(async (tx) => {
      // The initialize is sent now: the quote's rate window and the settlement deadline count from here.
      const at = new Date();
      const moved = await this.ledger.claimTransition(id, 'payout', 'awaiting_approval', 'created', 'api', {
        tx,
        at,
        patch: { approvedAt: at },
        guard: this.decisionGuard(approverId),
        actorId: approverId,
        payload: { decision: 'approved', ...(decision.reason ? { reason: decision.reason } : {}) },
      });
      if (!moved) return null;
      await this.repository.noteDecisionResource(tx, id);
      await this.outbox.publish('payout.approved', { ...toTransactionEventData(moved), actorId: approverId }, tx);
      await recordAuditedChange(tx, id, decisionDetails('approved', decision));
      return moved;
    });
    if (!approved) throw await this.decisionLost(id, approverId, 'created');
    const customer = await this.customers.requireRow(approved.customerId as string);
    const beneficiary = await this.beneficiaries.requireRow(approved.beneficiaryId as string);
    return this.initializeUpstream(approved, customer.email, beneficiary.providerId as string);
  }

  /**
   * Rejects a payout `awaiting_approval` as API client `approverId`: `rejected` (final; history: source
   * `api`, the approver as actor, `{decision: 'rejected', reason}`), `payout.rejected` announced; the
   * provider is never called. The decision is claimed as approve claims it (one of concurrent
   * decisions wins); the request's audit event (`payout.reject`) is written in its database transaction.
   * @throws as approve (404, 403 `approver_is_creator`, 409).
   */
  async reject(id: string, approverId: string, decision: PayoutDecisionDto = {}): Promise<PayoutDto> {
    await this.requireDecidable(id, approverId, 'rejected');
    const rejected = await this.repository.withTransaction(async (tx) => {
      const moved = await this.ledger.claimTransition(id, 'payout', 'awaiting_approval', 'rejected', 'api', {
        tx,
        guard: this.decisionGuard(approverId),
        actorId: approverId,
        patch: { failureReason: decision.reason ?? 'rejected' },
        payload: { decision: 'rejected', ...(decision.reason ? { reason: decision.reason } : {}) },
      });
      if (!moved) return null;
      await this.repository.noteDecisionResource(tx, id);
      await recordAuditedChange(tx, id, decisionDetails('rejected', decision));
      return moved;
    });
    if (!rejected) throw await this.decisionLost(id, approverId, 'rejected');
    return toPayoutDto(rejected);
  }

  /** The guard of `approverId`'s decision claim: not the creator, approval not lapsed now. */
  private decisionGuard(approverId: string): Prisma.Sql {
    return this.repository.decisionGuard(approverId, new Date(Date.now() - this.approvalTtlMs));
  }

  /**
   * The payout, checked decidable by `approverId` as read (the claim decides again under the row's
   * lock); a lapsed approval is expired on the way (409).
   */
  private async requireDecidable(id: string, approverId: string, to: 'created' | 'rejected'): Promise<LedgerRow> {
    const row = await this.requirePayout(id);
    if (row.status !== 'awaiting_approval') throw new InvalidStateTransitionError('payout', row.status, to);
    if (row.createdBy === approverId) {
      throw new DomainError(
        ErrorCode.ApproverIsCreator,
        'A payout is approved or rejected by another API client than the one that created it.',
      );
    }
    if (row.createdAt.getTime() + this.approvalTtlMs <= Date.now()) {
      // Expired only from `awaiting_approval` (claimed as a decision is): a decision that won meanwhile stays.
      const expired = await this.ledger.expireLapsedApproval(id, new Date(Date.now() - this.approvalTtlMs + 1));
      throw new InvalidStateTransitionError('payout', expired?.status ?? (await this.requirePayout(id)).status, to);
    }
    return row;
  }

  /**
   * Why a decision's claim moved nothing, as the request's answer: the payout read again and checked
   * as before the claim (404, 403, or 409 with the status another decision left, expiring a lapsed
   * approval); a 409 from `awaiting_approval` when it still reads decidable (the winner rolled back).
   */
  private async decisionLost(id: string, approverId: string, to: 'created' | 'rejected'): Promise<DomainError> {
    try {
      await this.requireDecidable(id, approverId, to);
    } catch (error) {
      if (error instanceof DomainError) return error;
      throw error;
    }
    return new InvalidStateTransitionError('payout', 'awaiting_approval', to);
  }

  /**
   * The provider's initialize for a `created` payout row (write-ahead already done): `initiated` with
   * fee and rate; a failure is recorded on the row (recordProviderFailure) and rethrown.
   */
  private async initializeUpstream(
    row: Transaction,
    customerEmail: string,
    beneficiaryProviderId: string,
  ): Promise<PayoutDto> {
    try {
      const upstream = await this.provider.initializePayout({
        amountMinor: row.amount,
        sourceCurrency: row.currency,
        reference: row.reference,
        customerEmail,
        description: row.description ?? '',
        beneficiaryId: beneficiaryProviderId,
        callbackUrl: providerCallbackUrl(this.config),
      });
      const { transaction, answered } = await this.ledger.transition(row.id, 'initiated', 'api', {
        known: row,
        answer: toPayoutDto,
        patch: {
          providerId: upstream.id,
          fee: upstream.feeMinor,
          exchangeRate: upstream.exchangeRate ?? upstream.spotPrice,
          providerPayload: upstream.raw as Prisma.InputJsonValue,
        },
      });
      // The Idempotency-Key's answer is stored with the move when it could be: answer exactly it.
      return (answered as PayoutDto | undefined) ?? toPayoutDto(transaction);
    } catch (error) {
      await this.ledger.recordProviderFailure(row.id, error);
      throw error;
    }
  }

  /**
   * Confirms (finalizes) an `initiated` payout at the provider → `pending`, with the payout amount
   * and currency. Only one request sends the finalize, however many arrive.
   * @throws NotFoundError (404); InvalidStateTransitionError (409) unless `initiated` and not already
   * being confirmed (the provider is not called); ProviderError (422 leaves it `initiated`; 502/504 → `unknown`);
   * ProviderAmountMismatchError (502) when the finalize answer states another amount → `needs_review`.
   */
  async confirm(id: string): Promise<PayoutDto> {
    // The claim, the Idempotency-Key's note and the audit event: one statement, written together or
    // not at all. A payout the client may not see is not claimed (404, as if absent), nor is one
    // whose Idempotency-Key claim was lost to a retry (409: nothing written, the provider not called).
    // POST /v1/payouts/{id}/confirm defers its Idempotency-Key claim to this statement too.
    const key = idempotentWriteSql('payout', id, CONFIRM_CLAIMABLE);
    const { row, keyHeld } = await this.repository.claimConfirm(
      id,
      key,
      auditedChangeSql(id, CONFIRM_WON),
      ownerRestriction(),
    );
    key.settled(keyHeld);
    if (row === 'lost') throw lostClaim();
    // Write-ahead for the Idempotency-Key: a retry after a crash is answered from this payout.
    if (row) auditedChangeRecorded();
    if (!row) {
      const current = await this.requirePayout(id);
      throw new InvalidStateTransitionError(
        'payout',
        current.confirmRequestedAt && current.status === 'initiated' ? 'confirming' : current.status,
        'pending',
      );
    }
    try {
      const upstream = await this.provider.finalizePayout({
        transactionId: row.providerId as string,
        sourceCurrency: row.currency,
        amountMinor: row.amount,
      });
      const { transaction, answered } = await this.ledger.transition(id, 'pending', 'api', {
        known: row,
        answer: toPayoutDto,
        patch: {
          counterAmount: upstream.payoutAmountMinor,
          counterCurrency: upstream.payoutCurrency ?? row.counterCurrency,
          exchangeRate: upstream.exchangeRate ?? row.exchangeRate,
          providerPayload: upstream.raw as Prisma.InputJsonValue,
        },
      });
      return (answered as PayoutDto | undefined) ?? toPayoutDto(transaction);
    } catch (error) {
      if (providerDidNotAct(error)) {
        // The provider said no, or the call was never sent (breaker, bulkhead, 429): nothing
        // happened, the payout may be confirmed again.
        await this.repository.releaseConfirm(id, error.message);
      } else {
        await this.ledger.recordProviderFailure(id, error);
      }
      throw error;
    }
  }

  /**
   * Releases payout `id` written ahead of a provider call that was never made (the database went
   * away in between; IdempotencyService's recovery calls it once the database is back): a row still
   * `created` → `failed` (reason DATABASE_LOST_BEFORE_CALL), a confirm claim on a row still
   * `initiated` is released (it may be confirmed again). Anything else is left as it is.
   */
  async releaseUnsent(id: string): Promise<void> {
    const row = await this.repository.findPayout(id);
    if (row?.status === 'created') {
      // Claimed from `created`: a row that moved meanwhile (its answer written after all) stays.
      await this.ledger.claimTransition(id, 'payout', 'created', 'failed', 'api', {
        patch: { failureReason: DATABASE_LOST_BEFORE_CALL },
      });
    } else if (row?.status === 'initiated' && row.confirmRequestedAt) {
      await this.repository.releaseConfirm(id, DATABASE_LOST_BEFORE_CALL);
    }
  }

  /** @throws NotFoundError (404). */
  async get(id: string): Promise<PayoutDto> {
    return toPayoutDto(await this.requirePayout(id));
  }

  private async requirePayout(id: string): Promise<LedgerRow> {
    const row = await this.repository.findPayout(id);
    if (!row || !ownedByCurrentClient(row)) throw new NotFoundError('Payout', id);
    return row;
  }
}

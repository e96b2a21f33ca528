import { randomUUID } from 'node:crypto';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { auditedChangeRecorded, auditedChangeSql } from '../audit/audit-chain';
import {
  BusinessRuleError,
  ErrorCode,
  InvalidStateTransitionError,
  NotFoundError,
  ProviderError,
  ValidationError,
} from '../common/errors';
import { holdIdempotencyClaim, idempotentWriteSql, lostClaim } from '../common/idempotency/idempotency-context';
import { isSafeMinor, minorToNumber, parseRate } from '../common/money';
import { newReference } from '../common/reference';
import type { Prisma, SwapQuote, TransactionStatus } from '../generated/prisma/client';
import { ProviderClient } from '../provider';
import { INSERTED, MOVED, LedgerService } from '../transactions/ledger.service';
import { toSwapDto } from '../transactions/transaction.mapper';
import { effectiveQuoteStatus, quoteExecutionRefusal, quoteExpiresAt } from './swap-quote-rules';
import { CreateSwapDto, CreateSwapQuoteDto, SwapDto, SwapQuoteDto } from './swap.dto';
import { QUOTE_CLAIMABLE, QUOTE_INSERTED, SwapsRepository } from './swaps.repository';

export function toSwapQuoteDto(row: SwapQuote, now: Date = new Date()): SwapQuoteDto {
  return {
    id: row.id,
    status: effectiveQuoteStatus(row, now),
    sourceCurrency: row.sourceCurrency,
    targetCurrency: row.targetCurrency,
    sourceAmount: minorToNumber(row.sourceAmount),
    targetAmount: minorToNumber(row.targetAmount),
    fee: minorToNumber(row.fee),
    rate: parseRate(row.rate.toString()),
    expiresAt: row.expiresAt.toISOString(),
    executedAt: row.executedAt?.toISOString() ?? null,
    transactionId: row.transactionId,
    providerId: row.providerId,
    createdAt: row.createdAt.toISOString(),
  };
}

/** Ledger status for the status of a finalize-swap answer (the doc promises `success`). */
function swapOutcome(providerStatus: string): TransactionStatus {
  if (providerStatus === 'success') return 'success';
  if (providerStatus === 'failed') return 'failed';
  return 'unknown';
}

/**
 * Why a quote request is refused after the provider answered it: the quoted target amount (or fee)
 * is beyond 2^53 − 1 minor units, which the API cannot answer as an exact JSON number (and, at
 * 2^63, the ledger cannot hold). The provider's quote is left to expire; nothing is stored.
 */
export const QUOTE_BEYOND_SAFE_MESSAGE =
  'is too large for this currency pair: the quoted target amount is beyond 2^53 - 1 minor units';

/**
 * Currency swaps between the account's wallets, in two steps (docs/provider.md#swaps,
 * #limits): a quote (stored per API client, valid until
 * `expiresAt`, about 250 s), then its execution (finalize-swap, `success` at once; the provider
 * sends no swap events, docs/provider.md#events).
 *
 * A quote is executed at most once: it is claimed under its row lock (`open` and not expired →
 * `executing`) in the same SQL statement that writes the ledger row (kind `swap`, direction
 * `debit`, status `created`), the Idempotency-Key's note and the audit event, so of two concurrent
 * requests only one calls the provider. The answer, the quote following it and the Idempotency-Key's
 * answer are one statement too (SwapsRepository, LedgerService.transitionAlone). After the call:
 * - success → ledger `success`, quote `executed`;
 * - provider refusal (422) → ledger `failed`, quote `failed`. The quote is NOT reopened: nothing
 *   moved, but the quote stays linked 1:1 to the ledger row of its one attempt, and a new quote
 *   (cheap, ~250 s) is the way to retry. The provider may also have refused because it counts the
 *   quote as used or lapsed, so a second finalize would be refused again;
 * - timeout / 5xx / malformed answer → ledger `unknown`, quote stays `executing`: the swap may
 *   have happened; reconciliation decides, and the quote is never executed a second time;
 * - an answer stating another amount than the quote (502 `provider_amount_mismatch`) → ledger
 *   `needs_review`, quote stays `executing`: a person decides.
 * A quote whose source amount or currency differs from the request is never stored (502
 * `provider_amount_mismatch`), so it can never be executed.
 */
@Injectable()
export class SwapsService implements OnModuleInit {
  constructor(
    private readonly repository: SwapsRepository,
    private readonly ledger: LedgerService,
    private readonly provider: ProviderClient,
  ) {}

  /** A swap resolved by hand (out of `needs_review`) takes its quote along: `executed` or `failed`. */
  onModuleInit(): void {
    this.ledger.registerManualMoveEffect(['swap'], (tx, row) => this.followLedger(tx, row.id, row.status));
  }

  /**
   * The quote of swap `transactionId` follows its ledger row's new status inside `tx` (reconciliation,
   * a manual resolution): `success` → `executed`, `failed` → `failed`, `needs_review` → `needs_review`;
   * any other status changes nothing.
   */
  async followLedger(tx: Prisma.TransactionClient, transactionId: string, status: TransactionStatus): Promise<void> {
    const outcome =
      status === 'success' ? 'executed' : status === 'failed' || status === 'needs_review' ? status : null;
    if (outcome) await this.repository.settleQuoteOfSwap(tx, transactionId, outcome);
  }

  /** When the quote of swap `transactionId` expires (null when it has none). */
  async quoteExpiryOfSwap(transactionId: string): Promise<Date | null> {
    return (await this.repository.findQuoteOfSwap(transactionId))?.expiresAt ?? null;
  }

  /**
   * Asks the provider for a quote to sell `amount` minor units of `sourceCurrency` for
   * `targetCurrency`, and stores it for `clientId` (status `open`). Amounts in the answer are
   * minor units (target amount rounded half-even by the provider layer); `expiresAt` is the
   * earlier of the provider's expiration and our request time + its seconds of validity.
   * Nothing moves money here, so no Idempotency-Key is needed. The provider layer sends the amount
   * in SWAP_AMOUNT_UNIT and refuses a quote whose source amount or currency differs from the request
   * (src/provider/provider-units.ts, answer-checks.ts).
   * @throws ValidationError (400, field `targetCurrency`) when both currencies are the same; BusinessRuleError (422
   * `business_rule_failed`, field `amount`, QUOTE_BEYOND_SAFE_MESSAGE: it depends on the provider's
   * rate, not on the body) when the provider's quote of it is beyond 2^53 − 1
   * minor units (the target amount or the fee), nothing stored;
   * ProviderAmountMismatchError (502 `provider_amount_mismatch`, hint `unit misconfigured?` when ×100):
   * the quote states another source amount or currency; ProviderError (422 refused; 502 failed or
   * quoted another currency pair; 504 timeout). In every failure nothing is stored.
   */
  async createQuote(clientId: string, input: CreateSwapQuoteDto): Promise<SwapQuoteDto> {
    if (input.sourceCurrency === input.targetCurrency) {
      throw new ValidationError([
        { field: 'targetCurrency', message: 'targetCurrency must differ from sourceCurrency' },
      ]);
    }
    const requestedAt = new Date();
    const upstream = await this.provider.initializeSwap({
      sourceCurrency: input.sourceCurrency,
      targetCurrency: input.targetCurrency,
      amountMinor: BigInt(input.amount),
    });
    if (upstream.sourceCurrency !== input.sourceCurrency || upstream.targetCurrency !== input.targetCurrency) {
      throw new ProviderError(
        ErrorCode.ProviderUnavailable,
        `The provider quoted ${upstream.sourceCurrency}→${upstream.targetCurrency} for a ${input.sourceCurrency}→${input.targetCurrency} request.`,
        'initializeSwap',
      );
    }
    // A quote the API could not answer exactly (its amounts are JSON numbers) or the ledger could not
    // hold: a source amount near 2^53 at a rate of 1,500 quotes more than 2^63 minor units.
    if (!isSafeMinor(upstream.targetAmountMinor) || !isSafeMinor(upstream.feeMinor)) {
      throw new BusinessRuleError([{ field: 'amount', message: QUOTE_BEYOND_SAFE_MESSAGE }]);
    }
    // The quote and the request's audit event (`swap_quote.create`): one statement, both or neither.
    const id = randomUUID();
    const row = await this.repository.createQuote(
      {
        id,
        providerId: upstream.id,
        clientId,
        sourceCurrency: upstream.sourceCurrency,
        targetCurrency: upstream.targetCurrency,
        sourceAmount: upstream.sourceAmountMinor,
        targetAmount: upstream.targetAmountMinor,
        fee: upstream.feeMinor,
        rate: upstream.rate,
        status: 'open',
        expiresAt: quoteExpiresAt(upstream, requestedAt),
        providerPayload: upstream.raw as Prisma.InputJsonValue,
      },
      auditedChangeSql(id, QUOTE_INSERTED),
    );
    auditedChangeRecorded();
    return toSwapQuoteDto(row);
  }

  /** One of the client's quotes. @throws NotFoundError (404), also for another client's quote. */
  async getQuote(clientId: string, id: string): Promise<SwapQuoteDto> {
    return toSwapQuoteDto(await this.requireQuote(clientId, id));
  }

  /**
   * Executes one of the client's quotes at the provider (finalize-swap) → the swap's ledger row:
   * `amount`/`currency` = source (debited), `counterAmount`/`counterCurrency` = target, fee in
   * minor units of the source, `exchangeRate` = the quote's rate; status `success`.
   * @throws NotFoundError (404) unknown quote or another client's; QuoteExpiredError (422
   * `quote_expired`) when it lapsed; InvalidStateTransitionError (409) when it is executing,
   * executed or failed — in all three cases the provider is not called. ProviderError (422 → ledger
   * `failed`, quote `failed`; 502/504 → ledger `unknown`, quote stays `executing`);
   * ProviderAmountMismatchError (502) when the swap answer states another amount than the quote's
   * source amount → ledger `needs_review`, quote stays `executing` (never executed again).
   */
  async execute(clientId: string, input: CreateSwapDto): Promise<SwapDto> {
    // A refusal before the write claims the Idempotency-Key alone first (deferred to the write
    // otherwise): a retry of an executed swap then finds the key taken and replays the answer.
    const quote = await this.requireQuote(clientId, input.quoteId).catch(async (error: unknown) => {
      await holdIdempotencyClaim();
      throw error;
    });
    const now = new Date();
    const refusal = quoteExecutionRefusal(quote, now);
    if (refusal) {
      await holdIdempotencyClaim();
      throw refusal;
    }

    // The quote claimed, the swap's write-ahead row, the Idempotency-Key's claim (POST /v1/swaps
    // defers it to here) or note, and the audit event: one statement, all or nothing. Of two
    // concurrent requests only one gets the row and calls the provider; one whose Idempotency-Key
    // claim was lost to a retry writes nothing (409).
    const transactionId = randomUUID();
    const { row: data, entry } = this.ledger.prepareRecord({
      id: transactionId,
      kind: 'swap',
      direction: 'debit',
      amount: quote.sourceAmount,
      currency: quote.sourceCurrency,
      counterAmount: quote.targetAmount,
      counterCurrency: quote.targetCurrency,
      exchangeRate: quote.rate,
      fee: quote.fee,
      reference: newReference('swap'),
      description: `Swap ${quote.sourceCurrency} to ${quote.targetCurrency} (quote ${quote.id})`,
    });
    const key = idempotentWriteSql('swap', transactionId, QUOTE_CLAIMABLE);
    const { row: recorded, keyHeld } = await this.repository.claimAndRecord(
      quote.id,
      clientId,
      now,
      data,
      entry,
      key,
      auditedChangeSql(transactionId, INSERTED),
    );
    key.settled(keyHeld);
    if (recorded === 'lost') throw lostClaim();
    if (!recorded) {
      // Another request claimed it between our read and our update (or it lapsed meanwhile).
      const current = await this.requireQuote(clientId, quote.id);
      throw (
        quoteExecutionRefusal(current, now) ?? new InvalidStateTransitionError('Swap quote', current.status, 'executed')
      );
    }
    auditedChangeRecorded();

    try {
      const upstream = await this.provider.finalizeSwap({
        quoteId: quote.providerId,
        sourceCurrency: quote.sourceCurrency,
        amountMinor: quote.sourceAmount,
      });
      const outcome = swapOutcome(upstream.status);
      const patch = {
        providerId: upstream.id,
        // The answer was checked against the quote's source amount (finalizeSwap): the same, unless
        // that check is ever lifted, in which case the answer's amount is kept (the general path).
        ...(upstream.amountMinor === quote.sourceAmount ? {} : { amount: upstream.amountMinor }),
        // The swap answer's fee when it states one, else the quoted fee.
        fee: upstream.feeMinor > 0n ? upstream.feeMinor : quote.fee,
        providerPayload: upstream.raw as Prisma.InputJsonValue,
        ...(outcome === 'success'
          ? {}
          : { failureReason: `The provider answered the swap with status ${upstream.status}.` }),
      };
      const quoteOutcome = outcome === 'unknown' ? null : outcome === 'success' ? 'executed' : 'failed';
      // The answer, the quote following it, the Idempotency-Key's answer: one statement.
      const moved = await this.ledger.transitionAlone(transactionId, outcome, 'api', {
        known: recorded,
        patch,
        answer: (row) => toSwapDto(row, quote.id),
        effects: quoteOutcome ? [this.repository.settleQuoteSql(quote.id, quoteOutcome, MOVED)] : [],
      });
      if (moved) return (moved.answered as SwapDto | undefined) ?? toSwapDto(moved.transaction, quote.id);
      // Not decided in one statement (the row moved meanwhile, e.g. by reconciliation): as before.
      const row = await this.repository.withTransaction(async (tx) => {
        const { transaction } = await this.ledger.transition(transactionId, outcome, 'api', { tx, patch });
        if (quoteOutcome) await this.repository.settleQuote(tx, quote.id, quoteOutcome);
        return transaction;
      });
      return toSwapDto(row, quote.id);
    } catch (error) {
      await this.recordFailure(transactionId, quote.id, error);
      throw error;
    }
  }

  /**
   * One swap (a ledger row of kind `swap`) of this client's quotes.
   * @throws NotFoundError (404), also for a swap of another client's quote.
   */
  async getSwap(clientId: string, id: string): Promise<SwapDto> {
    const swap = await this.repository.findSwap(id);
    if (!swap || swap.quote.clientId !== clientId) throw new NotFoundError('Swap', id);
    return toSwapDto(swap.row, swap.quote.id);
  }

  private async requireQuote(clientId: string, id: string): Promise<SwapQuote> {
    const row = await this.repository.findQuote(id);
    if (!row || row.clientId !== clientId) throw new NotFoundError('Swap quote', id);
    return row;
  }

  /**
   * After a failed finalize: refused → ledger `failed` and quote `failed` (one DB transaction);
   * no clear answer → ledger `unknown`, quote left `executing` (reconciliation decides).
   */
  private async recordFailure(transactionId: string, quoteId: string, error: unknown): Promise<void> {
    await this.repository.withTransaction(async (tx) => {
      const status = await this.ledger.recordProviderFailure(transactionId, error, tx);
      if (status === 'failed') await this.repository.settleQuote(tx, quoteId, 'failed');
    });
  }
}

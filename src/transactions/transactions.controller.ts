import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Audited } from '../audit/audited.decorator';
import { type AuthenticatedClient, CurrentClient, RequireScopes } from '../auth/auth.decorators';
import { ApiConflict, ApiNotFound, ApiProviderErrors, ApiValidationErrors } from '../common/api-responses';
import { ParseIdPipe } from '../common/validation';
import {
  ExportTransactionsQueryDto,
  GetTransactionQueryDto,
  ListTransactionsQueryDto,
  ResolveTransactionDto,
  TransactionDetailDto,
  TransactionPageDto,
  TransactionSummaryDto,
  TransactionSummaryQueryDto,
} from './transaction.dto';
import { CSV_COLUMNS } from './transactions-csv';
import { TransactionsService } from './transactions.service';

/**
 * The finance API over the local ledger. Reading needs `transactions:read` only: a finance key
 * reads history and moves no money. Resolving a `needs_review` row by hand needs `transactions:resolve`.
 */
@ApiTags('transactions')
@Controller('v1/transactions')
export class TransactionsController {
  constructor(private readonly transactions: TransactionsService) {}

  @Get()
  @RequireScopes('transactions:read')
  @ApiOperation({
    summary: 'List ledger transactions (filters, keyset pagination)',
    description:
      'Every money movement (collections, payouts, swaps, card top-ups, withdrawals and spends), newest first ' +
      '(`order=asc` for oldest first). Filters combine with AND. Pages are keyset pages on (createdAt, id): pass ' +
      '`nextCursor` back as `cursor` with the same filters; rows written meanwhile never shift a page. Amounts are ' +
      'minor units.',
  })
  @ApiOkResponse({ type: TransactionPageDto })
  @ApiValidationErrors()
  list(@Query() query: ListTransactionsQueryDto): Promise<TransactionPageDto> {
    return this.transactions.list(query);
  }

  @Get('summary')
  @RequireScopes('transactions:read')
  @ApiOperation({
    summary: 'Totals per currency × kind × status for a period',
    description:
      'Count and sums of amount and fee over the transactions created in [from, to) that match the filters. ' +
      'Sums are exact minor-unit integers as strings, and major units as decimal strings.',
  })
  @ApiOkResponse({ type: TransactionSummaryDto })
  @ApiValidationErrors()
  summary(@Query() query: TransactionSummaryQueryDto): Promise<TransactionSummaryDto> {
    return this.transactions.summary(query);
  }

  @Get('export')
  @RequireScopes('transactions:read')
  @ApiOperation({
    summary: 'Export ledger transactions as CSV (same filters as the list)',
    description:
      'A `text/csv` attachment streamed from a database cursor (constant memory, any size). RFC 4180: header row, ' +
      'comma separated, CRLF line ends, fields quoted when needed. Columns: ' +
      `${CSV_COLUMNS.join(', ')}. \`amount\`, \`fee\` and \`counter_amount\` are major units as decimal strings ` +
      '(`amount_minor`, `fee_minor`: the exact minor-unit integers). Free-text fields starting with = + - @ get a ' +
      'leading apostrophe (spreadsheet formula injection).',
  })
  @ApiProduces('text/csv')
  @ApiOkResponse({
    description:
      'The CSV file (`content-disposition: attachment; filename="transactions-<UTC time>.csv"`, e.g. `transactions-20261128T002416Z.csv`: no colons, which Windows refuses in file names).',
    content: { 'text/csv': { schema: { type: 'string' } } },
  })
  @ApiValidationErrors()
  async export(@Query() query: ExportTransactionsQueryDto, @Res() reply: FastifyReply): Promise<void> {
    const { filename, body } = await this.transactions.export(query);
    await reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="${filename}"`)
      .header('cache-control', 'no-store')
      .send(body);
  }

  @Get(':id')
  @RequireScopes('transactions:read')
  @ApiOperation({
    summary: 'Get a transaction with its status history',
    description:
      'The local record. With `refresh=true` the provider is asked first (GET /transactions/{id}) and a forward ' +
      'status move is applied with source `reconciliation`; a row whose provider call was never answered (no ' +
      'provider id, `created`/`unknown`) is settled once past its `settlesBy` (creation + SETTLEMENT_DEADLINE): ' +
      'a payout or a collection `failed` (reason `provider_answer_lost`), a swap `needs_review`.',
  })
  @ApiOkResponse({ type: TransactionDetailDto })
  @ApiValidationErrors()
  @ApiNotFound('transaction')
  @ApiProviderErrors()
  get(@Param('id', ParseIdPipe()) id: string, @Query() query: GetTransactionQueryDto): Promise<TransactionDetailDto> {
    return this.transactions.get(id, query.refresh === true);
  }

  @Post(':id/resolve')
  @Audited('transaction.resolve', 'transaction')
  @HttpCode(200)
  @RequireScopes('transactions:resolve')
  @ApiOperation({
    summary: 'Resolve a needs_review transaction by hand',
    description:
      'A row goes to `needs_review` when nothing the provider lets the gateway learn can settle it and money may ' +
      'have moved (e.g. a swap whose answer was lost; event `transaction.needs_review`). After checking the ' +
      "provider's records, a person sets it `success` or `failed` with the evidence as text. Recorded with source " +
      "`manual`, the API client as `actorId` and the evidence in the status history; a swap's quote follows " +
      '(`executed`/`failed`). Nothing is sent to the provider, and only this route moves a row out of `needs_review`.',
  })
  @ApiOkResponse({ type: TransactionDetailDto })
  @ApiValidationErrors()
  @ApiNotFound('transaction')
  @ApiConflict('invalid_state_transition: the transaction is not `needs_review`.')
  resolve(
    @Param('id', ParseIdPipe()) id: string,
    @Body() body: ResolveTransactionDto,
    @CurrentClient() client: AuthenticatedClient,
  ): Promise<TransactionDetailDto> {
    return this.transactions.resolve(id, body, client.id);
  }
}

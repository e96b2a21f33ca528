import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Audited } from '../audit/audited.decorator';
import { type AuthenticatedClient, CurrentClient, RequireScopes } from '../auth/auth.decorators';
import { ApiConflict, ApiNotFound, ApiValidationErrors } from '../common/api-responses';
import { ParseIdPipe } from '../common/validation';
import {
  CreateReconciliationRunDto,
  ListReconciliationItemsQueryDto,
  ListReconciliationRunsQueryDto,
  ReconciliationItemPageDto,
  ReconciliationRunDto,
  ReconciliationRunPageDto,
} from './reconciliation-run.dto';
import { RECONCILIATION_CSV_COLUMNS, ReconciliationRunsService } from './reconciliation-runs.service';

/**
 * Reconciliation reports: the ledger of a period compared with the provider's records. Starting one
 * needs `reconciliation:write`; reading them `reconciliation:read`. A report never moves money or statuses.
 */
@ApiTags('reconciliation')
@Controller('v1/reconciliation-runs')
export class ReconciliationRunsController {
  constructor(private readonly runs: ReconciliationRunsService) {}

  @Post()
  @Audited('reconciliation_run.create', 'reconciliation_run')
  @HttpCode(202)
  @RequireScopes('reconciliation:write')
  @ApiOperation({
    summary: 'Start a reconciliation report for a period (queued on the job queue)',
    description:
      'Every ledger row of [from, to) with a provider id (kinds payout, collection, swap by default) is looked up at ' +
      'the provider, throttled to RECONCILIATION_RATE per second, and compared on status, amount, fee and currency ' +
      '(minor units); provider callbacks of the period the gateway could not match are listed as unknown_locally. ' +
      'At most one run per period at a time.',
  })
  @ApiAcceptedResponse({ type: ReconciliationRunDto })
  @ApiValidationErrors()
  @ApiConflict('A run for this period is queued or running (`reconciliation_run_in_progress`, with `runId`).')
  start(@Body() body: CreateReconciliationRunDto, @CurrentClient() client: AuthenticatedClient) {
    return this.runs.start(body, client.id);
  }

  @Get()
  @RequireScopes('reconciliation:read')
  @ApiOperation({ summary: 'List reconciliation runs, newest first (keyset pages)' })
  @ApiOkResponse({ type: ReconciliationRunPageDto })
  @ApiValidationErrors()
  list(@Query() query: ListReconciliationRunsQueryDto) {
    return this.runs.list(query.cursor, query.limit);
  }

  @Get(':id')
  @RequireScopes('reconciliation:read')
  @ApiOperation({ summary: 'Get a reconciliation run: progress and totals per class' })
  @ApiOkResponse({ type: ReconciliationRunDto })
  @ApiValidationErrors()
  @ApiNotFound('reconciliation run')
  get(@Param('id', ParseIdPipe()) id: string) {
    return this.runs.get(id);
  }

  @Get(':id/items')
  @RequireScopes('reconciliation:read')
  @ApiOperation({ summary: "List a run's items (filter by class; keyset pages)" })
  @ApiOkResponse({ type: ReconciliationItemPageDto })
  @ApiValidationErrors()
  @ApiNotFound('reconciliation run')
  items(@Param('id', ParseIdPipe()) id: string, @Query() query: ListReconciliationItemsQueryDto) {
    return this.runs.items(id, query);
  }

  @Get(':id/export')
  @RequireScopes('reconciliation:read')
  @ApiOperation({
    summary: "Export a run's items as CSV",
    description: `RFC 4180 (header row, CRLF). Columns: ${RECONCILIATION_CSV_COLUMNS.join(', ')}. Amounts in minor units.`,
  })
  @ApiProduces('text/csv')
  @ApiOkResponse({ description: 'The CSV file.', content: { 'text/csv': { schema: { type: 'string' } } } })
  @ApiValidationErrors()
  @ApiNotFound('reconciliation run')
  async export(@Param('id', ParseIdPipe()) id: string, @Res() reply: FastifyReply): Promise<void> {
    const { filename, body } = await this.runs.export(id);
    await reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="${filename}"`)
      .header('cache-control', 'no-store')
      .send(body);
  }
}

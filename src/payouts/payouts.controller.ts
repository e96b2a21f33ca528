import { applyDecorators, Body, Controller, Get, Param, Post } from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { Audited } from '../audit/audited.decorator';
import { type AuthenticatedClient, CurrentClient, RequireScopes } from '../auth/auth.decorators';
import { ApiConflict, ApiNotFound, ApiUnsettledProviderErrors, ApiValidationErrors } from '../common/api-responses';
import { Idempotent } from '../common/idempotency/idempotent.decorator';
import { ProblemDto } from '../common/problem.dto';
import { ParseIdPipe } from '../common/validation';
import { CreatePayoutDto, PayoutDecisionDto, PayoutDto } from './payout.dto';
import { PayoutsService } from './payouts.service';

/**
 * The body and answers of a maker-checker decision route (approve, reject): the body is optional
 * (docs/finance.md: `{reason?}`; no body is a decision without a reason), the answer the payout, or
 * 400/403/404/409.
 */
function ApiPayoutDecision(): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiBody({ type: PayoutDecisionDto, required: false, description: 'Optional: no body decides without a reason.' }),
    ApiCreatedResponse({ type: PayoutDto }),
    ApiValidationErrors(),
    ApiForbiddenResponse({
      type: ProblemDto,
      description: 'The key lacks scope payouts:approve, or created this payout (`approver_is_creator`).',
    }),
    ApiNotFound('payout'),
    ApiConflict('Not awaiting approval (already decided, or its approval TTL lapsed: expired).'),
  );
}

@ApiTags('payouts')
@Controller('v1/payouts')
export class PayoutsController {
  constructor(private readonly payouts: PayoutsService) {}

  @Post()
  @Audited('payout.create', 'payout')
  @RequireScopes('payouts:write')
  @Idempotent({ claimInWork: true })
  @ApiOperation({
    summary: 'Initialize a payout to a beneficiary (status initiated, with fee and rate)',
    description:
      "At or above its currency's PAYOUT_APPROVAL_THRESHOLDS the payout is stored `awaiting_approval` and the " +
      'provider is not called until another API client approves it (POST /v1/payouts/{id}/approve).',
  })
  @ApiCreatedResponse({ type: PayoutDto })
  @ApiValidationErrors()
  @ApiNotFound('customer or beneficiary')
  @ApiUnsettledProviderErrors(
    '`beneficiaryId` is not a beneficiary of this customer registered with the provider; nothing stored',
  )
  create(@Body() body: CreatePayoutDto, @CurrentClient() client: AuthenticatedClient): Promise<PayoutDto> {
    return this.payouts.create(body, client.id);
  }

  @Post(':id/approve')
  @Audited('payout.approve', 'payout')
  @RequireScopes('payouts:approve')
  @Idempotent()
  @ApiOperation({
    summary: 'Approve a payout awaiting approval (maker-checker); it is then initialized upstream (initiated)',
    description:
      'By an API client other than the one that created the payout. The decision and its actor go to the ' +
      'status history; `payout.approved` is announced. Confirm follows as for any payout.',
  })
  @ApiPayoutDecision()
  @ApiUnsettledProviderErrors()
  approve(
    @Param('id', ParseIdPipe()) id: string,
    @Body() body: PayoutDecisionDto,
    @CurrentClient() client: AuthenticatedClient,
  ): Promise<PayoutDto> {
    return this.payouts.approve(id, client.id, body);
  }

  @Post(':id/reject')
  @Audited('payout.reject', 'payout')
  @RequireScopes('payouts:approve')
  @Idempotent()
  @ApiOperation({
    summary: 'Reject a payout awaiting approval (status rejected; the provider is never called)',
    description: 'By an API client other than the one that created the payout; `payout.rejected` is announced.',
  })
  @ApiPayoutDecision()
  reject(
    @Param('id', ParseIdPipe()) id: string,
    @Body() body: PayoutDecisionDto,
    @CurrentClient() client: AuthenticatedClient,
  ): Promise<PayoutDto> {
    return this.payouts.reject(id, client.id, body);
  }

  @Post(':id/confirm')
  @Audited('payout.confirm', 'payout')
  @RequireScopes('payouts:write')
  @Idempotent({ claimInWork: true })
  @ApiOperation({ summary: 'Confirm an initiated payout (provider finalize; status pending)' })
  @ApiCreatedResponse({ type: PayoutDto })
  @ApiValidationErrors()
  @ApiNotFound('payout')
  @ApiUnsettledProviderErrors()
  confirm(@Param('id', ParseIdPipe()) id: string): Promise<PayoutDto> {
    return this.payouts.confirm(id);
  }

  @Get(':id')
  @RequireScopes('payouts:read')
  @ApiOperation({ summary: 'Get a payout' })
  @ApiOkResponse({ type: PayoutDto })
  @ApiValidationErrors()
  @ApiNotFound('payout')
  get(@Param('id', ParseIdPipe()) id: string): Promise<PayoutDto> {
    return this.payouts.get(id);
  }
}

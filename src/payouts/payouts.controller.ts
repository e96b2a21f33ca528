import { Body, Controller, Get, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Audited } from '../audit/audited.decorator';
import { RequireScopes } from '../auth/auth.decorators';
import { ApiNotFound, ApiUnsettledProviderErrors, ApiValidationErrors } from '../common/api-responses';
import { Idempotent } from '../common/idempotency/idempotent.decorator';
import { ParseIdPipe } from '../common/validation';
import { CreatePayoutDto, PayoutDto } from './payout.dto';
import { PayoutsService } from './payouts.service';

@ApiTags('payouts')
@Controller('v1/payouts')
export class PayoutsController {
  constructor(private readonly payouts: PayoutsService) {}

  @Post()
  @Audited('payout.create', 'payout')
  @RequireScopes('payouts:write')
  @Idempotent()
  @ApiOperation({ summary: 'Initialize a payout to a beneficiary (status initiated, with fee and rate)' })
  @ApiCreatedResponse({ type: PayoutDto })
  @ApiValidationErrors()
  @ApiNotFound('customer or beneficiary')
  @ApiUnsettledProviderErrors()
  create(@Body() body: CreatePayoutDto): Promise<PayoutDto> {
    return this.payouts.create(body);
  }

  @Post(':id/confirm')
  @Audited('payout.confirm', 'payout')
  @RequireScopes('payouts:write')
  @Idempotent()
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

import { Body, Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { Audited } from '../audit/audited.decorator';
import { RequireScopes } from '../auth/auth.decorators';
import { ApiNotFound, ApiProviderErrors, ApiValidationErrors } from '../common/api-responses';
import { ParseCountryPipe, ParseIdPipe } from '../common/validation';
import { BeneficiariesService } from './beneficiaries.service';
import {
  BeneficiaryDto,
  BeneficiaryPageDto,
  CreateBeneficiaryDto,
  ListBeneficiariesQueryDto,
  PayoutCountryDto,
} from './beneficiary.dto';

@ApiTags('beneficiaries')
@Controller('v1')
export class BeneficiariesController {
  constructor(private readonly beneficiaries: BeneficiariesService) {}

  @Get('payout-countries/:country')
  @RequireScopes('beneficiaries:read')
  @ApiOperation({ summary: "A country's payout destination types and their fields (cached)" })
  @ApiParam({ name: 'country', example: 'KE', description: 'ISO 3166-1 alpha-2 country code (any case).' })
  @ApiOkResponse({ type: PayoutCountryDto })
  @ApiValidationErrors()
  @ApiNotFound('payout country')
  @ApiProviderErrors()
  country(@Param('country', new ParseCountryPipe()) country: string): Promise<PayoutCountryDto> {
    return this.beneficiaries.getCountry(country);
  }

  @Post('beneficiaries')
  @Audited('beneficiary.create', 'beneficiary')
  @RequireScopes('beneficiaries:write')
  @ApiOperation({ summary: "Register a payout destination (checked against the country's fields first)" })
  @ApiCreatedResponse({ type: BeneficiaryDto })
  @ApiValidationErrors()
  @ApiNotFound('customer')
  @ApiProviderErrors(
    "the provider does not serve payouts to `country`, or `destination` does not fit that country's destination " +
      'types and fields (GET /v1/payout-countries/{country})',
  )
  create(@Body() body: CreateBeneficiaryDto): Promise<BeneficiaryDto> {
    return this.beneficiaries.create(body);
  }

  @Get('beneficiaries/:id')
  @RequireScopes('beneficiaries:read')
  @ApiOperation({ summary: 'Get a beneficiary' })
  @ApiOkResponse({ type: BeneficiaryDto })
  @ApiValidationErrors()
  @ApiNotFound('beneficiary')
  get(@Param('id', ParseIdPipe()) id: string): Promise<BeneficiaryDto> {
    return this.beneficiaries.get(id);
  }

  @Get('beneficiaries')
  @RequireScopes('beneficiaries:read')
  @ApiOperation({ summary: 'List beneficiaries, newest first; filter by customer' })
  @ApiOkResponse({ type: BeneficiaryPageDto })
  @ApiValidationErrors()
  list(@Query() query: ListBeneficiariesQueryDto): Promise<BeneficiaryPageDto> {
    return this.beneficiaries.list(query);
  }
}

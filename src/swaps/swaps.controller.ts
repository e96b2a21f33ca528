import { Body, Controller, Get, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Audited } from '../audit/audited.decorator';
import type { AuthenticatedClient } from '../auth/auth.decorators';
import { CurrentClient, RequireScopes } from '../auth/auth.decorators';
import {
  ApiConflict,
  ApiProblem,
  ApiNotFound,
  ApiProviderErrors,
  ApiUnsettledProviderErrors,
  ApiValidationErrors,
} from '../common/api-responses';
import { Idempotent } from '../common/idempotency/idempotent.decorator';
import { ParseIdPipe } from '../common/validation';
import { CreateSwapDto, CreateSwapQuoteDto, SwapDto, SwapQuoteDto } from './swap.dto';
import { SwapsService } from './swaps.service';

@ApiTags('swaps')
@Controller('v1')
export class SwapsController {
  constructor(private readonly swaps: SwapsService) {}

  @Post('swap-quotes')
  @Audited('swap_quote.create', 'swap_quote')
  @RequireScopes('swaps:write')
  @ApiOperation({ summary: 'Get a swap quote from the provider (valid until expiresAt, about 250 s); moves no money' })
  @ApiCreatedResponse({ type: SwapQuoteDto })
  @ApiValidationErrors()
  @ApiProviderErrors(
    "`amount` is too large for this currency pair: at the provider's rate the quoted target amount (or fee) is " +
      'beyond 2^53 − 1 minor units; nothing stored',
  )
  createQuote(@CurrentClient() client: AuthenticatedClient, @Body() body: CreateSwapQuoteDto): Promise<SwapQuoteDto> {
    return this.swaps.createQuote(client.id, body);
  }

  @Get('swap-quotes/:id')
  @RequireScopes('swaps:write')
  @ApiOperation({ summary: "Get one of this client's swap quotes" })
  @ApiOkResponse({ type: SwapQuoteDto })
  @ApiValidationErrors()
  @ApiNotFound('swap quote')
  getQuote(
    @CurrentClient() client: AuthenticatedClient,
    @Param('id', ParseIdPipe()) id: string,
  ): Promise<SwapQuoteDto> {
    return this.swaps.getQuote(client.id, id);
  }

  @Post('swaps')
  @Audited('swap.create', 'swap')
  @RequireScopes('swaps:write')
  @Idempotent({ claimInWork: true })
  @ApiOperation({
    summary:
      'Execute a quote (provider finalize-swap): a ledger row of kind swap, status success; a quote is executed at most once',
  })
  @ApiCreatedResponse({ type: SwapDto })
  @ApiValidationErrors()
  @ApiNotFound('swap quote')
  @ApiUnsettledProviderErrors()
  @ApiProblem(422, 'quote_expired: the quote lapsed; the provider was not called.')
  @ApiConflict(
    'invalid_state_transition: the quote is being executed, was executed, or was refused; the provider was not called.',
  )
  execute(@CurrentClient() client: AuthenticatedClient, @Body() body: CreateSwapDto): Promise<SwapDto> {
    return this.swaps.execute(client.id, body);
  }

  @Get('swaps/:id')
  @RequireScopes('swaps:write')
  @ApiOperation({ summary: "Get a swap of this client's quotes" })
  @ApiOkResponse({ type: SwapDto })
  @ApiValidationErrors()
  @ApiNotFound('swap')
  getSwap(@CurrentClient() client: AuthenticatedClient, @Param('id', ParseIdPipe()) id: string): Promise<SwapDto> {
    return this.swaps.getSwap(client.id, id);
  }
}

import { Body, Controller, createParamDecorator, type ExecutionContext, Get, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Audited } from '../audit/audited.decorator';
import type { AppUser } from '../auth/access-token.verifier';
import { ForUsers } from '../auth/auth.decorators';
import { RequireStepUp } from '../auth/step-up.guard';
import { ApiConflict, ApiNotFound, ApiProblem, ApiProviderErrors, ApiValidationErrors } from '../common/api-responses';
import { CreateMyCustomerDto, CustomerDto } from './customer.dto';
import { CustomersService } from './customers.service';

/** The signed-in person, as ApiKeyGuard verified their access token (only on `@ForUsers` routes). */
const CurrentUser = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): AppUser => ctx.switchToHttp().getRequest<{ appUser: AppUser }>().appUser,
);

/**
 * The signed-in person's own customer (docs/auth.md): the only routes a person's access token may
 * call in this increment. API keys answer 403 here.
 */
@ApiTags('me')
@Controller('v1/me')
export class MeController {
  constructor(private readonly customers: CustomersService) {}

  @Get()
  @ForUsers('customers:read')
  @ApiOperation({
    summary: "The signed-in user's customer",
    description: 'People only (an access token from OIDC_ISSUER); 404 until POST /v1/me/customer made it.',
  })
  @ApiOkResponse({ type: CustomerDto })
  @ApiNotFound('customer of the signed-in user')
  get(@CurrentUser() user: AppUser): Promise<CustomerDto> {
    return this.customers.getForUser(user);
  }

  @Post('customer')
  @Audited('customer.create', 'customer')
  @ForUsers('customers:write')
  @RequireStepUp()
  @ApiOperation({
    summary: 'Create the customer of the signed-in user',
    description:
      "People only. The email is the token's verified `email` claim; the user (issuer + subject) is bound to the " +
      'new customer, at most one per user. Needs a recent or strong sign-in (step-up).',
  })
  @ApiCreatedResponse({ type: CustomerDto })
  @ApiValidationErrors()
  @ApiProblem(403, 'email_not_verified: the token has no email with `email_verified: true`.')
  @ApiConflict('conflict: the user already has a customer, or a customer has this email (the provider is not called).')
  @ApiProviderErrors()
  create(@CurrentUser() user: AppUser, @Body() body: CreateMyCustomerDto): Promise<CustomerDto> {
    return this.customers.createForUser(user, body);
  }
}

import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyIdentityDto } from './api-key.dto';
import { type AuthenticatedClient, CurrentClient, RequireKey } from './auth.decorators';

/**
 * What a key may do, asked by the key itself: a client (the finance page) shows only the views its
 * scopes allow instead of calling routes that would refuse it. Any valid key may ask; nothing secret
 * is answered (never the key or its hash).
 */
@ApiTags('api-keys')
@Controller('v1/api-keys')
export class ApiKeysController {
  @Get('me')
  @RequireKey()
  @ApiOperation({
    summary: "The calling key's client and scopes",
    description:
      'The API client of the key in `Authorization` and the scopes it holds, so that a client can offer only what ' +
      'the key may do. Needs no scope.',
  })
  @ApiOkResponse({ type: ApiKeyIdentityDto })
  me(@CurrentClient() client: AuthenticatedClient): ApiKeyIdentityDto {
    return { id: client.id, name: client.name, scopes: [...client.scopes].sort() };
  }
}

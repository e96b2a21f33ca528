import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AppUserAuth } from './access-token.verifier';
import { ApiClientsRepository } from './api-clients.repository';
import { ApiKeysController } from './api-keys.controller';
import { RouteScopesCheck } from './route-scopes.check';

/**
 * Client authentication; AppModule registers ApiKeyGuard as the first global guard. At start,
 * RouteScopesCheck refuses a route that declares neither its scopes nor `@Public()`. GET
 * /v1/api-keys/me tells a key its own scopes.
 */
@Global()
@Module({
  imports: [DiscoveryModule],
  controllers: [ApiKeysController],
  providers: [ApiClientsRepository, RouteScopesCheck, AppUserAuth],
  exports: [ApiClientsRepository, AppUserAuth],
})
export class AuthModule {}

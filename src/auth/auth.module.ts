import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AppUserAuth } from './access-token.verifier';
import { ApiClientsRepository } from './api-clients.repository';
import { RouteScopesCheck } from './route-scopes.check';

/**
 * Client authentication; AppModule registers ApiKeyGuard as the first global guard. At start,
 * RouteScopesCheck refuses a route that declares neither its scopes nor `@Public()`.
 */
@Global()
@Module({
  imports: [DiscoveryModule],
  providers: [ApiClientsRepository, RouteScopesCheck, AppUserAuth],
  exports: [ApiClientsRepository, AppUserAuth],
})
export class AuthModule {}

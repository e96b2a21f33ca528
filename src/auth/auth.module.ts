import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ApiClientsRepository } from './api-clients.repository';
import { RouteScopesCheck } from './route-scopes.check';

/**
 * Client authentication; AppModule registers ApiKeyGuard as the first global guard. At start,
 * RouteScopesCheck refuses a route that declares neither its scopes nor `@Public()`.
 */
@Global()
@Module({
  imports: [DiscoveryModule],
  providers: [ApiClientsRepository, RouteScopesCheck],
  exports: [ApiClientsRepository],
})
export class AuthModule {}

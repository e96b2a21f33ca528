import { Global, Module } from '@nestjs/common';
import { ApiClientsRepository } from './api-clients.repository';

/** Client authentication; AppModule registers ApiKeyGuard as the first global guard. */
@Global()
@Module({
  providers: [ApiClientsRepository],
  exports: [ApiClientsRepository],
})
export class AuthModule {}

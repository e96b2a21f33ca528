import { Module } from '@nestjs/common';
import { CustomersModule } from '../customers/customers.module';
import { VirtualAccountsController } from './virtual-accounts.controller';
import { VirtualAccountsRepository } from './virtual-accounts.repository';
import { VirtualAccountsService } from './virtual-accounts.service';

@Module({
  imports: [CustomersModule],
  controllers: [VirtualAccountsController],
  providers: [VirtualAccountsService, VirtualAccountsRepository],
  exports: [VirtualAccountsService],
})
export class VirtualAccountsModule {}

import { Module } from '@nestjs/common';
import { CustomersModule } from '../customers/customers.module';
import { VirtualAccountsController } from './virtual-accounts.controller';
import { VirtualAccountsService } from './virtual-accounts.service';

@Module({
  imports: [CustomersModule],
  controllers: [VirtualAccountsController],
  providers: [VirtualAccountsService],
  exports: [VirtualAccountsService],
})
export class VirtualAccountsModule {}

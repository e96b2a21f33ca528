import { Module } from '@nestjs/common';
import { FinancePageController } from './finance-page.controller';
import { FinancePageService } from './finance-page.service';

/** The finance staff's web page at `/finance` (static files; data comes from `/v1/transactions*`). */
@Module({ controllers: [FinancePageController], providers: [FinancePageService] })
export class FinancePageModule {}

import { Controller, Get, Headers, Param, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import type { FastifyReply } from 'fastify';
import { Public } from '../auth/auth.decorators';
import { NotFoundError } from '../common/errors';
import type { PageAsset } from './finance-page.assets';
import { FinancePageService } from './finance-page.service';

/**
 * The finance web page: `GET /finance` (the page), `/finance/<file>` (its scripts and styles),
 * `/finance/vendor/<file>` (Preact, htm, Chart.js). Public HTML and JavaScript with no key in it:
 * the page asks for a finance API key and calls `/v1/transactions*` with it like any client.
 * Not part of the API, so not in OpenAPI. Unknown files → 404 `not_found`.
 */
@ApiExcludeController()
@Public()
// Static files served from memory: a page load (about 8 files) should not spend the rate-limit budget.
@SkipThrottle()
@Controller('finance')
export class FinancePageController {
  constructor(private readonly page: FinancePageService) {}

  @Get()
  index(@Headers('if-none-match') etag: string | undefined, @Res() reply: FastifyReply): Promise<void> {
    return this.send(reply, this.page.file('index.html'), etag);
  }

  @Get('vendor/:file')
  vendor(
    @Param('file') file: string,
    @Headers('if-none-match') etag: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    return this.send(reply, this.page.vendorFile(file), etag);
  }

  @Get(':file')
  file(
    @Param('file') file: string,
    @Headers('if-none-match') etag: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    return this.send(reply, this.page.file(file || 'index.html'), etag);
  }

  private async send(reply: FastifyReply, asset: PageAsset | undefined, ifNoneMatch?: string): Promise<void> {
    if (!asset) throw new NotFoundError('Finance page file', 'requested');
    void reply.headers(this.page.securityHeaders()).header('etag', asset.etag).header('cache-control', 'no-cache');
    if (ifNoneMatch === asset.etag) {
      await reply.code(304).send();
      return;
    }
    await reply.header('content-type', asset.contentType).send(asset.body);
  }
}

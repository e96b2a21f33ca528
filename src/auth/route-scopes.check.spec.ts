import { Controller, Get, Post } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { Public, RequireScopes } from './auth.decorators';
import { RouteScopesCheck } from './route-scopes.check';

@Controller('declared')
class DeclaredController {
  @Get() @RequireScopes('customers:read') list() {
    return [];
  }

  @Get('open') @Public() open() {
    return 'ok';
  }
}

@Public()
@Controller('public-class')
class PublicClassController {
  @Get() any() {
    return 'ok';
  }
}

@Controller('forgotten')
class ForgottenController {
  @Get() @RequireScopes('customers:read') fine() {
    return 'ok';
  }

  @Post() forgot() {
    return 'oops';
  }

  /** Not a route: helpers on a controller are not checked. */
  helper() {
    return 1;
  }
}

async function boot(...controllers: Array<new () => unknown>) {
  const moduleRef = await Test.createTestingModule({
    imports: [DiscoveryModule],
    controllers,
    providers: [RouteScopesCheck],
  }).compile();
  return moduleRef.createNestApplication(new FastifyAdapter(), { logger: false });
}

describe(RouteScopesCheck.name, () => {
  it('lets an app start when every route declares scopes or @Public (on the method or the class)', async () => {
    const app = await boot(DeclaredController, PublicClassController);
    await expect(app.init()).resolves.toBe(app);
    expect(app.get(RouteScopesCheck).undeclaredRoutes()).toEqual([]);
    await app.close();
  });

  it('stops the app at start naming a route that declares neither', async () => {
    const app = await boot(DeclaredController, ForgottenController);
    await expect(app.init()).rejects.toThrow(
      'Routes without @RequireScopes(...) or @Public(): ForgottenController.forgot.',
    );
    expect(app.get(RouteScopesCheck).undeclaredRoutes()).toEqual([
      { controller: 'ForgottenController', handler: 'forgot' },
    ]);
  });
});

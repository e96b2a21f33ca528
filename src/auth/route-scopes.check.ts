import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { PATH_METADATA, METHOD_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { PUBLIC_ROUTE, REQUIRED_SCOPES } from './auth.decorators';

/** A route handler that declares neither `@RequireScopes(...)` nor `@Public()`. */
export interface UndeclaredRoute {
  controller: string;
  handler: string;
}

/**
 * Every route declares who may call it: `@RequireScopes(...)` (a key holding those scopes) or
 * `@Public()` (no key). A route with neither would otherwise need a key but check no scope, open
 * to every key; the gateway refuses to start instead, naming each such route.
 * (The guard also answers 403 for such a route, should one ever be mounted without this check.)
 */
@Injectable()
export class RouteScopesCheck implements OnApplicationBootstrap {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  /** @throws Error listing every route without a scope declaration. */
  onApplicationBootstrap(): void {
    const undeclared = this.undeclaredRoutes();
    if (undeclared.length > 0) {
      const list = undeclared.map((r) => `${r.controller}.${r.handler}`).join(', ');
      throw new Error(`Routes without @RequireScopes(...) or @Public(): ${list}. Declare who may call each one.`);
    }
  }

  /** The route handlers of every controller that declare neither decorator (on the method or its class). */
  undeclaredRoutes(): UndeclaredRoute[] {
    const found: UndeclaredRoute[] = [];
    for (const wrapper of this.discovery.getControllers()) {
      const { metatype } = wrapper;
      const instance = wrapper.instance as object | undefined;
      if (!instance || !metatype) continue;
      const prototype = Object.getPrototypeOf(instance) as Record<string, unknown>;
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const handler = prototype[name] as (...args: unknown[]) => unknown;
        const isRoute =
          Reflect.getMetadata(PATH_METADATA, handler) !== undefined &&
          Reflect.getMetadata(METHOD_METADATA, handler) !== undefined;
        if (!isRoute) continue;
        const targets = [handler, metatype];
        const declared =
          this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets) === true ||
          this.reflector.getAllAndOverride<string[]>(REQUIRED_SCOPES, targets) !== undefined;
        if (!declared) found.push({ controller: metatype.name, handler: name });
      }
    }
    return found;
  }
}

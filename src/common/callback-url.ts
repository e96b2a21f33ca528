import { type ConfigService } from '@nestjs/config';
import type { Env } from '../config/env';

/** Route the provider posts its callbacks to (docs/provider.md#callback-delivery). */
export const PROVIDER_WEBHOOK_PATH = '/webhooks/provider';

/** The `callbackUrl` the gateway sets on every provider call that takes one: PUBLIC_BASE_URL + /webhooks/provider. */
export function providerCallbackUrl(config: ConfigService<Env, true>): string {
  return new URL(PROVIDER_WEBHOOK_PATH, config.get('PUBLIC_BASE_URL', { infer: true })).toString();
}

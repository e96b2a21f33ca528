import { createHmac } from 'node:crypto';

/** A callback as the provider sends it: `{event, data}` (provider-webhooks.md). */
export interface ProviderCallback {
  event: string;
  data: Record<string, unknown>;
}

/** Result of delivering one callback: the HTTP status of each attempt (0 = no answer). */
export interface Delivery {
  url: string;
  attempts: number[];
}

/**
 * Posts a signed callback to `url`: JSON body, header `x-brails-signature` = hex HMAC-SHA512 of the
 * body with the webhook secret. Any answer but 200 is retried 3 more times (provider-webhooks.md),
 * `retryDelayMs` apart. Never throws.
 */
export async function deliverCallback(
  url: string,
  secret: string,
  callback: ProviderCallback,
  retryDelayMs = 100,
): Promise<Delivery> {
  const body = JSON.stringify(callback);
  const signature = createHmac('sha512', secret).update(body).digest('hex');
  const attempts: number[] = [];
  for (let attempt = 0; attempt < 4; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, retryDelayMs));
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-brails-signature': signature },
        body,
        signal: AbortSignal.timeout(5000),
      });
      attempts.push(res.status);
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {
      attempts.push(0);
    }
  }
  return { url, attempts };
}

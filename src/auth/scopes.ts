/**
 * Permissions an API client can hold. A route names the scope it needs with `@RequireScopes`.
 * A finance key holds `transactions:read` only: it reads history and moves no money.
 */
export const SCOPES = [
  'customers:read',
  'customers:write',
  'collections:read',
  'collections:write',
  'beneficiaries:read',
  'beneficiaries:write',
  'payouts:read',
  'payouts:write',
  /** Approve or reject a payout awaiting approval (maker-checker: never the key's own payouts). */
  'payouts:approve',
  'swaps:write',
  'virtual-accounts:read',
  'virtual-accounts:write',
  'cards:read',
  'cards:write',
  'cards:reveal',
  'transactions:read',
  /** Resolve a `needs_review` ledger row by hand (POST /v1/transactions/{id}/resolve). */
  'transactions:resolve',
  'webhook-subscriptions:write',
  /** Read the audit trail (GET /v1/audit-events). */
  'audit:read',
  /** Read reconciliation reports (GET /v1/reconciliation-runs…). */
  'reconciliation:read',
  /** Start a reconciliation report (POST /v1/reconciliation-runs). */
  'reconciliation:write',
] as const;

export type Scope = (typeof SCOPES)[number];

/**
 * The scopes a customer's own app may use for them: what a person's access token may carry here
 * (docs/auth.md). Never finance, approval, audit, reconciliation, subscription or key administration.
 */
export const CUSTOMER_SCOPES: readonly Scope[] = [
  'customers:read',
  'customers:write',
  'collections:read',
  'collections:write',
  'beneficiaries:read',
  'beneficiaries:write',
  'payouts:read',
  'payouts:write',
  'swaps:write',
  'virtual-accounts:read',
  'virtual-accounts:write',
  'cards:read',
  'cards:write',
  'cards:reveal',
];

/** Every scope except `cards:reveal`, which must be granted on purpose. */
export const DEMO_SCOPES: Scope[] = SCOPES.filter((s) => s !== 'cards:reveal');

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

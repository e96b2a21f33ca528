import type { CardStatus } from '../generated/prisma/client';

/**
 * What moves a virtual card, and from where to where: the card's state machine as data. The API
 * (create, freeze, unfreeze, terminate), the provider's answers and the card callbacks all move
 * a card through `CardsRepository.move`, which reads this table; no other code assigns a card status.
 *
 * - `created` is written before the provider's create call (write-ahead).
 * - `accept`: the provider accepted the create call (its `createdStatus` `pending`).
 * - `refuse`: the provider refused the create call (422); `lose`: no clear answer (timeout, 5xx).
 * - `activate` / `fail`: `virtualcard.created.success` / `virtualcard.created.failed`. Both also
 *   settle a card whose create call got no answer (`unknown`), and one whose callback overtook
 *   the create call's answer (`created`).
 * - `freeze`, `unfreeze`, `terminate`: the rules (the provider documents none,
 *   docs/provider.md#what-the-provider-leaves-unsaid): active ↔ frozen, active | frozen →
 *   terminated. `terminated` and `failed` are final: nothing ever moves a card out of them.
 */
export const CARD_MOVES = {
  accept: { from: ['created'], to: 'pending' },
  refuse: { from: ['created'], to: 'failed' },
  lose: { from: ['created'], to: 'unknown' },
  activate: { from: ['created', 'unknown', 'pending'], to: 'active' },
  fail: { from: ['created', 'unknown', 'pending'], to: 'failed' },
  freeze: { from: ['active'], to: 'frozen' },
  unfreeze: { from: ['frozen'], to: 'active' },
  terminate: { from: ['active', 'frozen'], to: 'terminated' },
} as const satisfies Record<string, { from: readonly CardStatus[]; to: CardStatus }>;

export type CardMove = keyof typeof CARD_MOVES;

/** The moves a client asks for through the API (`POST /v1/cards/{id}/{move}`). */
export const CARD_ACTIONS = ['freeze', 'unfreeze', 'terminate'] as const satisfies readonly CardMove[];
export type CardAction = (typeof CARD_ACTIONS)[number];

/** Statuses nothing moves a card out of. */
export const FINAL_CARD_STATUSES: readonly CardStatus[] = ['terminated', 'failed'];

/** The only status in which a card takes top-ups and withdrawals (a frozen or terminated card refuses them). */
export const MONEY_MOVING_CARD_STATUSES: readonly CardStatus[] = ['active'];

/** Result of asking for a move: `apply` it, `unchanged` (the card is already there: a duplicate), or `refused`. */
export type CardMoveOutcome = 'apply' | 'unchanged' | 'refused';

/** What `move` does to a card in status `current`. */
export function cardMoveOutcome(move: CardMove, current: CardStatus): CardMoveOutcome {
  const rule = CARD_MOVES[move];
  if (current === rule.to) return 'unchanged';
  return (rule.from as readonly CardStatus[]).includes(current) ? 'apply' : 'refused';
}

/**
 * How long a freeze, unfreeze or terminate claim (`cards.transition`) holds a card, in multiples of
 * PROVIDER_TIMEOUT_MS: a claim older than this is taken to belong to a process that died between
 * claiming and releasing, and lapses (the card can be moved again). The provider call it guards
 * ends within one PROVIDER_TIMEOUT_MS, so a live claim never lapses while its call runs.
 */
export const CARD_TRANSITION_LEASE_TIMEOUTS = 3;

/**
 * Card holder statuses. `created` is written before the provider's registercarduser call
 * (write-ahead, like a payout); its answer makes it `pending` (or `failed` when refused, `unknown`
 * when no clear answer came: timeout or 5xx). `pending` waits for `virtualcard.user.kyc.success|failed`.
 */
export const CARD_HOLDER_STATUSES = ['created', 'unknown', 'pending', 'active', 'failed'] as const;
export type CardHolderStatus = (typeof CARD_HOLDER_STATUSES)[number];

/**
 * The card holder's state machine:
 * - `accept` / `refuse` / `lose`: the registercarduser answer (accepted; refused, 422 or a KYC
 *   refusal in the answer; no clear answer, timeout or 5xx).
 * - `kycPassed` / `kycFailed`: the KYC events move a holder forward only (a late `pending` or a
 *   second verdict changes nothing). They also settle a registration whose answer never came
 *   (`unknown`) or was overtaken by its callback (`created`), as `virtualcard.created.*` does for cards.
 * - `register`: registering again through the API, allowed after KYC failed and after a
 *   registration without a clear answer (`unknown`: registration moves no money, so retrying it is
 *   safe; the provider answers a duplicate as it sees fit). A `created` holder is a registration in
 *   flight: refused (409) until CARD_TRANSITION_LEASE_TIMEOUTS × PROVIDER_TIMEOUT_MS have passed
 *   since it was written (a process that died mid-call), then treated as `unknown`.
 */
export const CARD_HOLDER_MOVES = {
  accept: { from: ['created'], to: 'pending' },
  refuse: { from: ['created'], to: 'failed' },
  lose: { from: ['created'], to: 'unknown' },
  kycPassed: { from: ['created', 'unknown', 'pending'], to: 'active' },
  kycFailed: { from: ['created', 'unknown', 'pending'], to: 'failed' },
  register: { from: ['failed', 'unknown'], to: 'created' },
} as const satisfies Record<string, { from: readonly CardHolderStatus[]; to: CardHolderStatus }>;

export type CardHolderMove = keyof typeof CARD_HOLDER_MOVES;

/** Holder statuses that may be issued cards: `pending` and `active` (the provider decides on `pending`). */
export const CARD_ISSUING_HOLDER_STATUSES: readonly string[] = ['pending', 'active'];

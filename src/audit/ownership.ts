/**
 * The ownership rule (OWNERSHIP=client, docs/api.md "Who sees what"): a key confirms, reads and
 * changes only what its own API client created (`created_by` = the client's id). Rows whose
 * `created_by` is null (made before the rule existed, by the CLI, a job or a provider callback) are
 * seen by no key under the rule. With OWNERSHIP=all (the default) every key sees every row its
 * scopes allow. Services call `ownedByCurrentClient` (or `ownedOrNotFound`) where they load a row
 * for a request, and answer 404 (as if absent, never 403) when it says no; lists filter with
 * `ownerFilter` (Prisma) or a `created_by` condition (the finance reads' SQL). A sub-resource follows
 * its parent: a collection its ledger row, a card's movements and a card holder's cards their parent.
 */
import { NotFoundError } from '../common/errors';
import { currentRequestContext } from '../common/request-context';

/** `created_by` for a row created now: the current request's API client (null outside requests). */
export function creatorId(): string | null {
  return currentRequestContext()?.actor?.id ?? null;
}

/** The client the current request is restricted to under OWNERSHIP=client, or undefined (no restriction). */
export function ownerRestriction(): string | undefined {
  const context = currentRequestContext();
  return context?.ownerOnly ? (context.actor?.id ?? undefined) : undefined;
}

/** Whether the current request may see a row created by `createdBy` (always true without the rule). */
export function ownedByCurrentClient(row: { createdBy: string | null }): boolean {
  const owner = ownerRestriction();
  return owner === undefined || row.createdBy === owner;
}

/** A Prisma `where` fragment limiting a list to the current client's rows under the rule (empty otherwise). */
export function ownerFilter(): { createdBy?: string } {
  const owner = ownerRestriction();
  return owner === undefined ? {} : { createdBy: owner };
}

/**
 * `row` when it exists and the current request may see it (ownedByCurrentClient).
 * @throws NotFoundError (404 `not_found`, "`resource` `id` was not found.") otherwise: another
 * client's row under OWNERSHIP=client answers exactly as an absent one.
 */
export function ownedOrNotFound<T extends { createdBy: string | null }>(
  row: T | null | undefined,
  resource: string,
  id: string,
): T {
  if (!row || !ownedByCurrentClient(row)) throw new NotFoundError(resource, id);
  return row;
}

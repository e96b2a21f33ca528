/**
 * The ownership rule (OWNERSHIP=client, docs/api.md "Who sees what"): a key confirms, reads and
 * changes only what its own API client created (`created_by` = the client's id). Rows whose
 * `created_by` is null (made before the rule existed, by the CLI, a job or a provider callback) are
 * seen by no key under the rule. With OWNERSHIP=all (the default) every key sees every row its
 * scopes allow. Services call `ownedByCurrentClient` where they load a row for a request, and
 * answer 404 (as if absent, never 403) when it says no; lists filter with `ownerFilter`.
 */
import { currentRequestContext } from '../common/request-context';

/** `created_by` for a row created now: the current request's API client (null outside requests). */
export function creatorId(): string | null {
  return currentRequestContext()?.actor?.id ?? null;
}

/** The client the current request is restricted to under OWNERSHIP=client, or undefined (no restriction). */
export function ownerRestriction(): string | undefined {
  const context = currentRequestContext();
  return context?.ownerOnly ? context.actor?.id : undefined;
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

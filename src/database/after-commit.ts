/**
 * Work to do once a database transaction has committed (and only then): PrismaService runs every
 * interactive transaction (`$transaction(fn)`) through `runTracked`, which runs what `afterCommit`
 * registered on its transaction client once the commit has succeeded, and drops it when the
 * transaction rolls back. For in-memory marks that must not outlive a rollback (the request's audit
 * event "recorded": src/audit/audit-chain.ts). No I/O here.
 */

/** What is to run after the commit of each open transaction, by its transaction client. */
const pending = new WeakMap<object, Array<() => void>>();

/**
 * Runs `work` once transaction `tx` has committed; never when it rolls back. Returns false (and
 * registers nothing) when `tx` is not a transaction PrismaService runs (the caller then decides
 * what to do at once, as before).
 */
export function afterCommit(tx: object, work: () => void): boolean {
  const list = pending.get(tx);
  if (!list) return false;
  list.push(work);
  return true;
}

/**
 * Runs `fn` (an interactive transaction's body) through `begin` (the client's own `$transaction`),
 * then, once the transaction has committed, what `afterCommit` registered on its client, in order.
 * A rollback (`fn` or the commit threw) drops them. Registered works set in-memory marks and must
 * not throw (one that did would be a bug, and its error would reach the caller after the commit).
 */
export async function runTracked<T, Tx extends object>(
  begin: (body: (tx: Tx) => Promise<T>) => Promise<T>,
  fn: (tx: Tx) => Promise<T>,
): Promise<T> {
  let works: Array<() => void> | undefined;
  const result = await begin((tx) => {
    works = [];
    pending.set(tx, works);
    return fn(tx);
  });
  for (const work of works ?? []) work();
  return result;
}

import { Prisma } from '../generated/prisma/client';

/**
 * Whether a database error is about the data of the statement (SQLSTATE class 22 "data exception",
 * or 54 "program limit exceeded", e.g. a value nested too deeply) rather than the database being
 * unavailable: such a row can never be stored, and retrying it is pointless.
 */
export function isDataError(error: unknown): boolean {
  if (!(error instanceof Prisma.PrismaClientKnownRequestError)) return false;
  const meta = error.meta as { driverAdapterError?: { cause?: { originalCode?: string; code?: string } } } | undefined;
  const cause = meta?.driverAdapterError?.cause;
  const state = cause?.originalCode ?? cause?.code ?? '';
  return /^(22|54)/.test(state);
}

import { Prisma } from '../generated/prisma/client';

/**
 * Whether `error` is a unique-constraint violation (Prisma P2002; Prisma's raw query failure P2010
 * whose driver error is PostgreSQL 23505; or 23505 from node-postgres directly): a concurrent writer
 * got there first. Services may ask this of an error a repository let through (they never import
 * PrismaService); the predicate is the only database detail they see.
 */
export function isUniqueViolation(error: unknown): boolean {
  if (error instanceof Prisma.PrismaClientKnownRequestError) {
    if (error.code === 'P2002') return true;
    const cause = (error.meta?.driverAdapterError as { cause?: { originalCode?: unknown } } | undefined)?.cause;
    return error.code === 'P2010' && cause?.originalCode === '23505';
  }
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
}

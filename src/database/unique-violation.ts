import { Prisma } from '../generated/prisma/client';

/**
 * Whether `error` is a unique-constraint violation (Prisma P2002, or PostgreSQL 23505 from raw SQL):
 * a concurrent writer got there first. Services may ask this of an error a repository let through
 * (they never import PrismaService); the predicate is the only database detail they see.
 */
export function isUniqueViolation(error: unknown): boolean {
  if (error instanceof Prisma.PrismaClientKnownRequestError) return error.code === 'P2002';
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
}

import { DomainError, ErrorCode, ProviderError } from '../common/errors';
import { toProblem } from '../common/problem-details.filter';
import { Prisma } from '../generated/prisma/client';
import { DatabaseUnavailableError, isDatabaseUnavailable } from './unavailable';

/** A node-postgres DatabaseError as the server sends it (severity, code). */
function pgError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code, severity: 'FATAL' });
}

/** A Prisma error over @prisma/adapter-pg with the driver adapter's cause, as Prisma 7 throws it. */
function prismaError(code: string, cause: Record<string, unknown>): Error {
  return new Prisma.PrismaClientKnownRequestError('Raw query failed.', {
    code,
    clientVersion: '7',
    meta: { driverAdapterError: Object.assign(new Error(String(cause.kind)), { cause }) },
  });
}

describe('isDatabaseUnavailable', () => {
  it.each([
    [
      'a session ended by a fast shutdown (57P01)',
      pgError('57P01', 'terminating connection due to administrator command'),
    ],
    ['a crash shutdown (57P02)', pgError('57P02', 'terminating connection because of crash of another server process')],
    ['a server starting up (57P03)', pgError('57P03', 'the database system is starting up')],
    ['a connection exception (08006)', pgError('08006', 'connection failure')],
    ['a write sent to a standby (25006)', pgError('25006', 'cannot execute INSERT in a read-only transaction')],
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['a reset connection', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })],
    ['a connection cut under a query', new Error('Connection terminated unexpectedly')],
    ["the pool's wait bound", new Error('timeout exceeded when trying to connect')],
    [
      "Prisma's transaction wait bound",
      new Error('Transaction API error: Unable to start a transaction in the given time.'),
    ],
    [
      'Prisma P1001 (cannot reach)',
      prismaError('P1001', { kind: 'DatabaseNotReachable', host: '127.0.0.1', port: 5432 }),
    ],
    ['Prisma P1017 (connection closed)', prismaError('P1017', { kind: 'ConnectionClosed' })],
    ['Prisma P2010 over 57P01', prismaError('P2010', { kind: 'postgres', code: '57P01', originalCode: '57P01' })],
    ['Prisma P2010 over an unreachable server', prismaError('P2010', { kind: 'DatabaseNotReachable' })],
    ['a wrapper whose cause is one', Object.assign(new Error('failed'), { cause: pgError('57P01', 'terminating') })],
    [
      'an AggregateError of several hosts refused',
      new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })]),
    ],
    ['the 503 itself', new DatabaseUnavailableError()],
  ])('is true for %s', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', pgError('23505', 'duplicate key value violates unique constraint')],
    ['a serialization failure', pgError('40001', 'could not serialize access')],
    ['Prisma P2002', prismaError('P2002', { kind: 'UniqueConstraintViolation' })],
    [
      'Prisma P2010 over a syntax error',
      prismaError('P2010', { kind: 'postgres', code: '42601', originalCode: '42601' }),
    ],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    [
      "the provider's connection refused (a DomainError of its own)",
      new ProviderError(ErrorCode.ProviderUnavailable, 'connect ECONNREFUSED 10.0.0.1:443', 'initializePayout'),
    ],
    ['another DomainError', new DomainError(ErrorCode.Conflict, 'Connection terminated')],
    ['nothing', undefined],
  ])('is false for %s', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });

  it('renders as 503 problem+json database_unavailable with retryAfter, never 500', () => {
    const problem = toProblem(pgError('57P01', 'terminating connection due to administrator command'), '/v1/payouts');
    expect(problem).toMatchObject({
      status: 503,
      code: 'database_unavailable',
      type: 'urn:wallet-gateway:problem:database_unavailable',
      retryAfter: 2,
    });
    expect(problem.detail).not.toMatch(/terminating/); // the driver's message is not leaked
    expect(toProblem(new TypeError('bug'))).toMatchObject({ status: 500, code: 'internal_error' });
  });
});

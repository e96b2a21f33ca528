import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsString, Max, MaxLength, Min } from 'class-validator';
import { ValidationError } from './errors';
import { OptionalNonNull } from './validation';

/** Largest page a list endpoint serves (docs/api.md#conventions: `limit` ≤ 100). */
export const MAX_PAGE_SIZE = 100;

/** Query parameters shared by every keyset-paginated list. */
export class PageQueryDto {
  @ApiPropertyOptional({ description: "Opaque cursor from a previous page's `nextCursor`." })
  @OptionalNonNull()
  @IsString()
  @MaxLength(200)
  cursor?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE_SIZE, default: 20 })
  @OptionalNonNull()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit?: number;
}

/** A page of a list: `{ data, nextCursor }`; `nextCursor` is null on the last page. */
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

/** Position of a row in a list ordered by (createdAt DESC, id DESC). */
export interface CreatedAtCursor {
  createdAt: Date;
  id: string;
}

/** What `encodeCursor` takes: the last row's `createdAt` as a Date or as `isoTime` text, and its id. */
export type IsoCreatedAtCursor = IsoInstants<CreatedAtCursor, 'createdAt'>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Encodes a keyset position as an opaque base64url token. */
export function encodeCursor(cursor: IsoCreatedAtCursor): string {
  return Buffer.from(JSON.stringify([isoTime(cursor.createdAt), cursor.id])).toString('base64url');
}

/**
 * An instant as ISO 8601 text in UTC to the millisecond (`2026-11-25T10:42:27.123Z`, as
 * `Date.prototype.toISOString` writes it): a Date converted, text already in that form (a row read
 * with `ISO_TIME_SQL`) returned as it is.
 */
export function isoTime(value: Date | string): string {
  return typeof value === 'string' ? value : value.toISOString();
}

/**
 * Row type `R` with its instants `K` read either as Dates (Prisma, or a read that parses them) or
 * as `isoTime` text (a page whose SQL writes them with `isoTimeSql`): one row type of an entity for
 * both readers, whose mapper writes each instant with `isoTime`.
 */
export type IsoInstants<R, K extends keyof R> = Omit<R, K> & {
  [F in K]: null extends R[F] ? Date | string | null : Date | string;
};

/**
 * SQL for column `column` (a timestamptz) as the text `isoTime` gives (`to_char` in UTC, its
 * milliseconds truncated as a Date read of the column truncates them), aliased `alias`: for a hot
 * list whose rows go straight to JSON, PostgreSQL writes the text instead of the gateway parsing
 * each instant into a Date and writing it out again (for years 1000–9999).
 */
export function isoTimeSql(column: string, alias: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "${alias}"`;
}

/**
 * Decodes a token from `encodeCursor`.
 * @throws ValidationError (400) on a token that was not produced by `encodeCursor`.
 */
export function decodeCursor(token: string): CreatedAtCursor {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as [string, string];
    const date = new Date(createdAt);
    // Every keyset list orders by (createdAt, id) with UUID ids: anything else was not made here.
    if (Number.isNaN(date.getTime()) || typeof id !== 'string' || !UUID.test(id)) throw new Error('bad cursor');
    return { createdAt: date, id };
  } catch {
    throw new ValidationError([{ field: 'cursor', message: 'cursor is not a valid page cursor' }]);
  }
}

/** Prisma `where` fragment selecting rows after the cursor in (createdAt DESC, id DESC) order. */
export function afterCursor(token: string | undefined): object {
  if (!token) return {};
  const { createdAt, id } = decodeCursor(token);
  return { OR: [{ createdAt: { lt: createdAt } }, { createdAt, id: { lt: id } }] };
}

/** Turns `limit + 1` fetched rows into a page. */
export function toPage<R extends IsoCreatedAtCursor, T>(rows: R[], limit: number, map: (row: R) => T): Page<T> {
  const hasMore = rows.length > limit;
  const pageRows = hasMore ? rows.slice(0, limit) : rows;
  const last = pageRows[pageRows.length - 1];
  return { data: pageRows.map(map), nextCursor: hasMore && last ? encodeCursor(last) : null };
}

/** Swagger shape for list responses. */
export class PageMetaDto {
  @ApiProperty({ type: String, nullable: true, description: 'Cursor of the next page, null on the last page.' })
  nextCursor: string | null;
}

import { sql, type RawBuilder } from 'kysely';
import type { DbTransaction } from '../schema.js';
import { memoryConditions, type SpaceKeys } from './filters.js';
import { memoryColumns, toMemoryRecord, type MemoryRow } from './read-memories.js';
import type { ListPosition, MemoryFilters, MemoryRecord } from './records.js';

export interface ListPageRequest {
  /** Start after this position; undefined = from the newest. */
  readonly after: ListPosition | undefined;
  readonly filters: MemoryFilters;
  readonly includeExpired: boolean;
  readonly maxChars: number;
}

export interface ListedMemory extends MemoryRecord {
  /** This memory's position, for the next page to start after it. */
  readonly position: ListPosition;
}

/** A timestamp column as UTC text to the microsecond, for a keyset position (a Date would lose the microseconds). */
export function microsecondsUtc(column: string): RawBuilder<string> {
  return sql<string>`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

/**
 * Up to `rows` of the subject's memories, newest first, after `request.after`.
 * Keyset pagination over the (subject, created_at desc, id desc) index: pages stay stable and cheap at any depth.
 */
export async function listPage(trx: DbTransaction, spaces: SpaceKeys, request: ListPageRequest, rows: number): Promise<ListedMemory[]> {
  const after = request.after === undefined ? sql`true` : sql`(created_at, id) < (${request.after.createdAt}::timestamptz, ${request.after.id})`;
  const result = await sql<MemoryRow & { position: string }>`
    select ${memoryColumns(request.maxChars)},
           ${microsecondsUtc('created_at')} as position
      from memories
     where ${memoryConditions(spaces, request.filters, { includeExpired: request.includeExpired })} and ${after}
     order by created_at desc, id desc
     limit ${rows}`.execute(trx);
  return result.rows.map((row) => {
    const memory = toMemoryRecord(row);
    return { ...memory, position: { createdAt: row.position, id: memory.id } };
  });
}

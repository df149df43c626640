import { sql, type Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { memoryConditions } from './filter-sql.js';
import { memoryColumns, toMemoryRow, type MemoryRow } from './recall-repository.js';
import type { ListRequest } from './types.js';

type Trx = Transaction<Database>;

export interface ListedRow extends MemoryRow {
  /** created_at to the microsecond (UTC), for the next page's cursor; a Date would lose the microseconds. */
  readonly position: string;
}

/**
 * One page of the subject's memories, newest first, plus one row more than asked when more follow.
 * Keyset pagination over the (subject, created_at desc, id desc) index: pages stay stable and cheap at any depth.
 */
export async function listPage(trx: Trx, subject: string, request: ListRequest, rows: number): Promise<ListedRow[]> {
  const after = request.cursor === undefined ? sql`true` : sql`(created_at, id) < (${request.cursor.createdAt}::timestamptz, ${request.cursor.id})`;
  const result = await sql<Parameters<typeof toMemoryRow>[0] & { position: string }>`
    select ${memoryColumns(request.maxChars)},
           to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as position
      from memories
     where ${memoryConditions(subject, request.filters, { includeExpired: request.includeExpired })} and ${after}
     order by created_at desc, id desc
     limit ${rows}`.execute(trx);
  return result.rows.map((row) => ({ ...toMemoryRow(row), position: row.position }));
}

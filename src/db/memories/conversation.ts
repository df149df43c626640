import { sql, type RawBuilder } from 'kysely';
import { prepared } from '../prepared.js';
import type { DbTransaction } from '../schema.js';
import { memoryConditions, notExpired, type SpaceKeys, inSpaces } from './filters.js';
import type { MemoryFilters } from './records.js';

/**
 * The memory remembered next after `memoryId` in the same conversation: the subject's first later memory (by
 * creation, then id) with the same session_id, when it passes `filters`. Undefined when the memory has no
 * session_id, nothing came after it, or what came after is filtered out. Prepared, since recall asks it whenever
 * its planner did not (recall-plan.ts).
 */
export async function nextInConversation(trx: DbTransaction, spaces: SpaceKeys, memoryId: number, filters: MemoryFilters): Promise<number | undefined> {
  const { rows } = await prepared(continuationsQuery(spaces, filters, sql`select ${memoryId}::bigint as id`)).execute(trx);
  return toContinuations(rows).get(memoryId) ?? undefined;
}

/** A row of continuationsQuery: an anchor, and what came next after it (null: nothing, or filtered out). */
export interface ContinuationRow {
  anchor: string | number;
  next: string | number | null;
}

/**
 * nextInConversation for each of `anchors` (a query of ids, in a column `id`), a row each. Served by the
 * (subject, created_at, id) index from each anchor's own position.
 */
export function continuationsQuery(spaces: SpaceKeys, filters: MemoryFilters, anchors: RawBuilder<unknown>): RawBuilder<ContinuationRow> {
  return sql<ContinuationRow>`
    select asked.id as anchor,
           (select later.id
              from memories anchor
             cross join lateral (
                   select id from memories
                    where ${inSpaces('subject', spaces)} and session_id = anchor.session_id and ${notExpired}
                      and (created_at, id) > (anchor.created_at, anchor.id)
                    order by created_at, id
                    limit 1) as later
             where ${inSpaces('anchor.subject', spaces)} and anchor.id = asked.id and anchor.session_id is not null
               and exists (select 1 from memories where memories.id = later.id and ${memoryConditions(spaces, filters)})) as next
      from (${anchors}) as asked`;
}

/** continuationsQuery's rows by anchor: the next id, or null when nothing came next. */
export function toContinuations(rows: readonly ContinuationRow[]): Map<number, number | null> {
  return new Map(rows.map((row) => [Number(row.anchor), row.next === null ? null : Number(row.next)]));
}
